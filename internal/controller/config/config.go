// Package config reconciles ProviderConfigs and ClusterProviderConfigs: it
// counts their users and keeps a config in use from being deleted.
package config

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/gated"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/usage"
)

// Setup adds controllers for both kinds of provider config, which count
// users in u, and fills u from the API server's usages.
func Setup(mgr ctrl.Manager, o controller.Options, u *usage.Usages) error {
	watches, err := client.NewWithWatch(mgr.GetConfig(), client.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		u.Start(ctx, watches)
		return nil
	})); err != nil {
		return err
	}
	for _, c := range []struct {
		gvk schema.GroupVersionKind
		obj resource.ProviderConfig
	}{
		{gvk: v1alpha1.ProviderConfigGroupVersionKind, obj: &v1alpha1.ProviderConfig{}},
		{gvk: v1alpha1.ClusterProviderConfigGroupVersionKind, obj: &v1alpha1.ClusterProviderConfig{}},
	} {
		name := providerconfig.ControllerName(c.gvk.GroupKind().String())
		r := &counter{
			client: mgr.GetClient(),
			users:  u.Users,
			kind:   c.gvk.Kind,
			newConfig: func() resource.ProviderConfig {
				return c.obj.DeepCopyObject().(resource.ProviderConfig) //nolint:forcetypeassert // A copy of a config is one.
			},
			log:    o.Logger.WithValues("controller", name),
			record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), //nolint:staticcheck // crossplane-runtime's recorder takes the old events API's.
		}
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(o.ForControllerRuntime()).
			// A new generation is a new spec or a deletion. The counter's
			// own writes of the config must not ask for another count.
			For(c.obj, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			WatchesRawSource(u.Woken(c.gvk.Kind)).
			Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

// SetupGated adds the controllers once their CRDs exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, u *usage.Usages) error {
	gated.Register(mgr, o, "provider configs", func() error { return Setup(mgr, o, u) }, v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind)
	return nil
}
