// Package workload sets up the managed reconcilers of LambdaFunction and
// LambdaAgent. Both kinds share the connection to a target cluster; each has
// its own external client.
package workload

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const (
	errTrackUsage     = "cannot track provider config usage"
	errNotImplemented = "the external client of this kind is not implemented yet: this provider build only validates and stores the resource"
)

// A Kind is one managed resource kind this package reconciles.
type Kind[T resource.ModernManaged] struct {
	GVK     schema.GroupVersionKind
	New     func() T
	NewList func() resource.ManagedList
}

// Kinds reconciled by this provider.
var (
	LambdaFunction = Kind[*v1alpha1.LambdaFunction]{
		GVK:     v1alpha1.LambdaFunctionGroupVersionKind,
		New:     func() *v1alpha1.LambdaFunction { return &v1alpha1.LambdaFunction{} },
		NewList: func() resource.ManagedList { return &v1alpha1.LambdaFunctionList{} },
	}
	LambdaAgent = Kind[*v1alpha1.LambdaAgent]{
		GVK:     v1alpha1.LambdaAgentGroupVersionKind,
		New:     func() *v1alpha1.LambdaAgent { return &v1alpha1.LambdaAgent{} },
		NewList: func() resource.ManagedList { return &v1alpha1.LambdaAgentList{} },
	}
)

// A connector tracks which provider config a resource uses before it connects.
type connector[T resource.ModernManaged] struct {
	usage *resource.ProviderConfigUsageTracker
}

// Connect records the resource's provider config usage. The external client
// that acts on the target cluster is not part of this build, so Connect
// reports that instead of pretending to act.
func (c *connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	if err := c.usage.Track(ctx, mg); err != nil {
		return nil, errors.Wrap(err, errTrackUsage)
	}
	return nil, errors.New(errNotImplemented)
}

// Setup adds a controller that reconciles one kind of managed resource.
func Setup[T resource.ModernManaged](mgr ctrl.Manager, o controller.Options, k Kind[T]) error {
	name := managed.ControllerName(k.GVK.GroupKind().String())
	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[T](&connector[T]{
			usage: resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		}),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))),
		managed.WithPollInterval(o.PollInterval),
		managed.WithManagementPolicies(),
	}
	if o.MetricOptions != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
		if err := mgr.Add(statemetrics.NewMRStateRecorder(mgr.GetClient(), o.Logger, o.MetricOptions.MRStateMetrics, k.NewList(), o.MetricOptions.PollStateMetricInterval)); err != nil {
			return err
		}
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(k.GVK), opts...)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		WithEventFilter(resource.DesiredStateChanged()).
		For(k.New()).
		Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter))
}

// SetupGated adds the controller once the kind's CRD exists.
func SetupGated[T resource.ModernManaged](mgr ctrl.Manager, o controller.Options, k Kind[T]) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, k); err != nil {
			mgr.GetLogger().Error(err, "cannot set up controller", "gvk", k.GVK.String())
		}
	}, k.GVK)
	return nil
}
