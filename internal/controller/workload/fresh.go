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
// provider's last write of it is looked at again when nothing wakes it.
// Informers lag by milliseconds at rest and by seconds in a rush.
const staleRequeue = 250 * time.Millisecond

// A freshReconciler puts off a reconcile until the cache it reads has seen
// the provider's last write of the resource; see clients.Writes.
type freshReconciler[T resource.ModernManaged] struct {
	kind   Kind[T]
	cache  client.Reader
	writes *clients.Writes
	inner  reconcile.Reconciler
	// wake, when set, queues a put-off reconcile again once the cache
	// delivers the write. Looking every 250 ms instead, a resource was
	// put off 31 times on its way to Ready at 10,000 functions, each time
	// a copy of it out of the cache.
	wake func(reconcile.Request)
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
	var wake func()
	if f.wake != nil {
		wake = func() { f.wake(req) }
	}
	if !f.writes.Seen(f.kind.GVK, req.NamespacedName, version, wake) {
		if wake != nil {
			// Woken, or not waited for any longer.
			return reconcile.Result{RequeueAfter: clients.DefaultWriteWait}, nil
		}
		return reconcile.Result{RequeueAfter: staleRequeue}, nil
	}
	return f.inner.Reconcile(ctx, req)
}
