// Package config reconciles ProviderConfigs and ClusterProviderConfigs: it
// counts their users and keeps a config in use from being deleted.
package config

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/gated"
)

// Setup adds controllers for both kinds of provider config.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	for _, c := range []struct {
		gvk schema.GroupVersionKind
		obj client.Object
	}{
		{gvk: v1alpha1.ProviderConfigGroupVersionKind, obj: &v1alpha1.ProviderConfig{}},
		{gvk: v1alpha1.ClusterProviderConfigGroupVersionKind, obj: &v1alpha1.ClusterProviderConfig{}},
	} {
		name := providerconfig.ControllerName(c.gvk.GroupKind().String())
		of := resource.ProviderConfigKinds{
			Config:    c.gvk,
			Usage:     v1alpha1.ProviderConfigUsageGroupVersionKind,
			UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind,
		}
		r := providerconfig.NewReconciler(uncopiedLists{Manager: mgr}, of,
			providerconfig.WithLogger(o.Logger.WithValues("controller", name)),
			providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name)))) //nolint:staticcheck // crossplane-runtime's recorder takes the old events API's.
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(o.ForControllerRuntime()).
			// A new generation is a new spec or a deletion. The
			// reconciler's own writes of the config (its users, at each
			// count) must not ask for another count: while usages were
			// created they did, once per write, past any settling.
			For(c.obj, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&v1alpha1.ProviderConfigUsage{}, settled(&resource.EnqueueRequestForProviderConfig{}, usersSettle)).
			Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

// SetupGated adds the controllers once their CRDs exist.
func SetupGated(mgr ctrl.Manager, o controller.Options) error {
	gated.Register(mgr, o, "provider configs", func() error { return Setup(mgr, o) }, v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind)
	return nil
}
