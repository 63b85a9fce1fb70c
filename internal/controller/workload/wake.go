package workload

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// A queue is a controller's work queue.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// wakes hands the resources whose objects changed in a target cluster to
// the controller of their kind. Target caches come and go with provider
// configs, so they call wake rather than being watched one by one.
type wakes struct {
	mu      sync.RWMutex
	queues  map[string]queue
	changed map[string]func(reconcile.Request)
}

func newWakes() *wakes {
	return &wakes{queues: map[string]queue{}, changed: map[string]func(reconcile.Request){}}
}

// source is the controller's end of a kind's wakes: it learns the
// controller's queue when the controller starts. Changed learns of each
// wake before it is queued.
func (w *wakes) source(kind string, changed func(reconcile.Request)) source.Source {
	return source.Func(func(_ context.Context, q queue) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.queues[kind], w.changed[kind] = q, changed
		return nil
	})
}

// wake queues a resource for its controller. A kind whose controller has
// not started yet is not queued: its first reconciles are ahead anyway.
func (w *wakes) wake(kind, namespace, name string) {
	w.mu.RLock()
	q, changed := w.queues[kind], w.changed[kind]
	w.mu.RUnlock()
	if q == nil {
		return
	}
	r := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
	changed(r)
	q.Add(r)
}
