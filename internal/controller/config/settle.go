package config

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// usersSettle is how long a provider config's users may change before they
// are counted again. Each count lists every usage of the config: when
// 10,000 resources were created against one config, the usages' events
// asked for 1,293 counts, each listing and copying up to 10,000 usages, and
// as many writes of the config and its status.
const usersSettle = time.Second

// A queue is a controller's work queue.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// settled hands what h queues to the queue d later, so that the events of
// a burst ask for one reconcile, not one each. The config's own changes (a
// deletion) are queued at once, by the controller's own watch.
func settled(h handler.EventHandler, d time.Duration) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { h.Create(ctx, e, later{queue: q, d: d}) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { h.Update(ctx, e, later{queue: q, d: d}) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { h.Delete(ctx, e, later{queue: q, d: d}) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) {
			h.Generic(ctx, e, later{queue: q, d: d})
		},
	}
}

// later is a queue whose items are added d later. An item already waiting
// is not added twice.
type later struct {
	queue
	d time.Duration
}

// Add adds r d later.
func (l later) Add(r reconcile.Request) { l.AddAfter(r, l.d) }

// uncopiedLists is a manager whose client lists the cache's own objects,
// not copies of them: the provider config reconciler only counts and reads
// the usages it lists.
type uncopiedLists struct {
	manager.Manager
}

// GetClient is the manager's client, listing without copies.
func (m uncopiedLists) GetClient() client.Client {
	return uncopiedList{Client: m.Manager.GetClient()}
}

// uncopiedList is a client that lists without copies.
type uncopiedList struct {
	client.Client
}

// List lists the cache's own objects.
func (c uncopiedList) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	return c.Client.List(ctx, l, append(opts, client.UnsafeDisableDeepCopy)...)
}
