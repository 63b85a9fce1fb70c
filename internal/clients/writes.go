package clients

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultWriteWait is how long a reconcile waits at most for the cache to
// see the provider's last write of its resource. A cache that lags longer
// is not waited for: the reconcile then meets a conflict, as it would have.
const DefaultWriteWait = 30 * time.Second

// Writes remembers the resource version of the provider's last write of
// each object, so a reconcile can tell that the cache it reads has not yet
// seen it. crossplane-runtime's reconciler writes a resource's finalizer,
// annotations and status in one reconcile and then requeues it at once; a
// reconcile that reads the resource before its informer has seen those
// writes writes again from the stale copy, is refused with a conflict and
// backs off. At 2,000 functions created at once that was hundreds of
// conflicts per run.
type Writes struct {
	wait time.Duration
	now  func() time.Time

	mu sync.Mutex
	// kinds are those whose writes a reconcile waits for; the writes of
	// others, such as ProviderConfigUsages, are not kept.
	kinds map[schema.GroupVersionKind]bool
	last  map[writeKey]written
	// swept is when writes older than the wait were last forgotten.
	swept time.Time
}

type writeKey struct {
	gvk schema.GroupVersionKind
	types.NamespacedName
}

// A written is the resource version a write returned, and when.
type written struct {
	version string
	at      time.Time
	// wake queues the reconcile put off until a cache sees the write.
	wake func()
}

// NewWrites waits at most wait for a write to be seen.
func NewWrites(wait time.Duration) *Writes {
	return &Writes{wait: wait, now: time.Now, kinds: map[schema.GroupVersionKind]bool{}, last: map[writeKey]written{}}
}

// Follow keeps the writes of a kind from now on.
func (w *Writes) Follow(gvk schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kinds[gvk] = true
}

// wrote records the resource version the API server returned for a write
// of a followed kind.
func (w *Writes) wrote(gvk schema.GroupVersionKind, o client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.kinds[gvk] {
		return
	}
	k := writeKey{gvk, client.ObjectKeyFromObject(o)}
	// A reconcile put off for an earlier write waits for this one now.
	w.last[k] = written{version: o.GetResourceVersion(), at: w.now(), wake: w.last[k].wake}
}

// older is whether version is known to be older than the write's.
func (wr written) older(version string) bool {
	c, err := resourceversion.CompareResourceVersion(version, wr.version)
	return err == nil && c < 0
}

// Seen is whether a cache that holds an object at version has seen the
// provider's last write of it. Once it has, or the write is older than the
// wait, or the versions cannot be compared, the write is forgotten. An
// object the cache does not hold (version "") has nothing to wait for, nor
// has one whose write Cached has already forgotten: the cache delivered it
// after the reconcile read version. While it has not, wake, if not nil, is
// called once Cached tells that it has.
func (w *Writes) Seen(gvk schema.GroupVersionKind, key types.NamespacedName, version string, wake func()) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.sweep(now)
	k := writeKey{gvk, key}
	last, ok := w.last[k]
	if !ok {
		return true
	}
	if version != "" && now.Sub(last.at) < w.wait && last.older(version) {
		last.wake = wake
		w.last[k] = last
		return false
	}
	w.forget(k)
	return true
}

// forget drops a write nothing needs to wait for any longer. w.mu is held.
func (w *Writes) forget(k writeKey) {
	delete(w.last, k)
	w.shrink()
}

// shrink replaces an emptied map of writes. A map keeps the room it grew
// to; a rush of 10,000 creates left 2.8 MB behind at rest. w.mu is held.
func (w *Writes) shrink() {
	if len(w.last) == 0 {
		w.last = map[writeKey]written{}
	}
}

// sweep forgets, at most once a wait, every write older than the wait,
// which no reconcile waits for any longer. A cache may deliver a write
// before the write's own answer is recorded; Cached then never matches it,
// and it is held until its resource's next reconcile, which at rest may be
// minutes away. One such write keeps the room of a whole rush. w.mu is held.
func (w *Writes) sweep(now time.Time) {
	if now.Sub(w.swept) < w.wait {
		return
	}
	w.swept = now
	for k, wr := range w.last {
		if now.Sub(wr.at) >= w.wait {
			delete(w.last, k)
		}
	}
	w.shrink()
}

// Cached tells that a cache delivered o of kind gvk at its version. Once
// the cache has seen the provider's last write of it, the write is
// forgotten, so Writes holds only writes the caches have yet to deliver,
// and the reconcile that waits for it is woken.
func (w *Writes) Cached(gvk schema.GroupVersionKind, o client.Object) {
	w.mu.Lock()
	k := writeKey{gvk, client.ObjectKeyFromObject(o)}
	last, ok := w.last[k]
	if !ok || last.older(o.GetResourceVersion()) {
		w.mu.Unlock()
		return
	}
	w.forget(k)
	w.mu.Unlock()
	if last.wake != nil {
		last.wake()
	}
}

// Handler tells Writes of every object of kind gvk an informer delivers.
func (w *Writes) Handler(gvk schema.GroupVersionKind) toolscache.ResourceEventHandler {
	cached := func(obj any) {
		if o, ok := obj.(client.Object); ok {
			w.Cached(gvk, o)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: cached, UpdateFunc: func(_, obj any) { cached(obj) }}
}

// A WriteRecorder is a client that records in Writes the resource version
// of every object it writes.
type WriteRecorder struct {
	client.Client
	writes *Writes
}

// NewWriteRecorder records c's writes in w.
func NewWriteRecorder(c client.Client, w *Writes) WriteRecorder {
	return WriteRecorder{Client: c, writes: w}
}

// record notes a successful write's resource version.
func (c WriteRecorder) record(o client.Object, err error) error {
	if err != nil {
		return err
	}
	if gvk, gerr := c.GroupVersionKindFor(o); gerr == nil {
		c.writes.wrote(gvk, o)
	}
	return nil
}

// Create records the created object's version.
func (c WriteRecorder) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	return c.record(o, c.Client.Create(ctx, o, opts...))
}

// Update records the updated object's version.
func (c WriteRecorder) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	return c.record(o, c.Client.Update(ctx, o, opts...))
}

// Patch records the patched object's version.
func (c WriteRecorder) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	return c.record(o, c.Client.Patch(ctx, o, p, opts...))
}

// Status records the versions its updates and patches return.
func (c WriteRecorder) Status() client.SubResourceWriter {
	return statusRecorder{SubResourceWriter: c.Client.Status(), c: c}
}

type statusRecorder struct {
	client.SubResourceWriter
	c WriteRecorder
}

func (s statusRecorder) Update(ctx context.Context, o client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.record(o, s.SubResourceWriter.Update(ctx, o, opts...))
}

func (s statusRecorder) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.record(o, s.SubResourceWriter.Patch(ctx, o, p, opts...))
}
