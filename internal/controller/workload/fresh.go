package workload

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
)

// staleRequeue is how soon a resource whose cached copy predates the
// provider's last write of it is looked at again. Informers lag by
// milliseconds at rest and by seconds in a rush.
const staleRequeue = 250 * time.Millisecond

// A freshReconciler puts off a reconcile until the cache it reads has seen
// the provider's last write of the resource; see clients.Writes.
type freshReconciler[T resource.ModernManaged] struct {
	kind   Kind[T]
	cache  client.Reader
	writes *clients.Writes
	inner  reconcile.Reconciler
}

// Reconcile runs the inner reconcile unless the cached resource is older
// than the provider's last write of it. A resource that cannot be read is
// left to the inner reconcile, which reports it.
func (f *freshReconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mg := f.kind.New()
	version := ""
	if err := f.cache.Get(ctx, req.NamespacedName, mg); err == nil {
		version = mg.GetResourceVersion()
	}
	if !f.writes.Seen(f.kind.GVK, req.NamespacedName, version) {
		return reconcile.Result{RequeueAfter: staleRequeue}, nil
	}
	return f.inner.Reconcile(ctx, req)
}
