package clients

import (
	"context"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// IndexOwner is the name of the informer index that finds the objects
// render made for one resource, within its namespace. Without it a
// resource's objects are found by a label selector, which the cache answers
// by matching every object of the namespace: at 10,000 functions in one
// namespace that matching was two thirds of the provider's CPU.
const IndexOwner = "lambda.m.crossplane.io/owner"

// OwnerKey is a resource's key in IndexOwner: its kind and name.
func OwnerKey(kind, name string) string { return kind + "/" + name }

// ownerIndexName is IndexOwner's name among an informer's indexes: the name
// controller-runtime's cache looks up for a List that matches the field
// (client.MatchingFields), under a key that is the namespace listed in, a
// slash and the value. Its own IndexField keys each object a second time,
// for a List across all namespaces: a set of one key an object, nearly
// half of what a Service takes in its informer's store and indexes, for a
// List the provider never makes. So IndexOwner holds only the first key,
// and a List through it must name the namespace (client.InNamespace).
const ownerIndexName = "field:" + IndexOwner

// ownerIndex is the key of an object in IndexOwner: its namespace and the
// key of the resource whose labels it carries; none when render did not
// make it.
func ownerIndex(obj any) ([]string, error) {
	o, ok := obj.(client.Object)
	if !ok || !rendered(o) {
		return nil, nil
	}
	l := o.GetLabels()
	return []string{o.GetNamespace() + "/" + OwnerKey(l[render.LabelKind], l[render.LabelResource])}, nil
}

// rendered is true of an object whose labels say render made it for a
// resource.
func rendered(o client.Object) bool {
	l := o.GetLabels()
	return l[render.LabelManagedBy] == render.ManagedBy && l[render.LabelKind] != "" && l[render.LabelResource] != ""
}

// A WakeFn is told of a resource whose object in a target cluster changed.
// An object lives in its resource's namespace.
type WakeFn func(kind, namespace, name string)

// Owned are the kinds of object resources own in a target cluster, by kind,
// and whom to tell when one of them changes.
type Owned struct {
	Kinds map[string]client.Object
	// Unindexed are the kinds that are not indexed: those of which a
	// resource owns the objects named after it, read by name, and a build
	// Job's pods, read by the Job's label. Each key of an index is a set of
	// its own, about 270 bytes a cached Service.
	Unindexed map[string]bool
	// Changed, of a kind that has it, says which updates of its objects
	// wake their resources, in place of every change of status and every
	// deletion.
	Changed map[string]ChangedFn
	// Wake, when set, is told of the resource whose object's status changed
	// or whose object was deleted: a Knative Service turning Ready, a build
	// Job ending, an object someone removed. Without it, a resource learns
	// of these only at its next poll.
	Wake WakeFn
}

// A ChangedFn says whether an object's update, from was to is, wakes the
// resource whose labels it carries.
type ChangedFn func(was, is client.Object) bool

// Informers are what FollowOwned needs of a cache.
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// FollowOwned adds IndexOwner to a cache's informers of each owned kind
// that is not Unindexed, wakes their resources as Owned says, and returns which
// kinds are followed. A kind the cluster does not serve (Knative not
// installed yet) is left without either: its objects are found by labels,
// or by name, and seen at each poll.
func FollowOwned(ctx context.Context, c Informers, o Owned) map[string]bool {
	followed := map[string]bool{}
	for kind, obj := range o.Kinds {
		// As the cache's own IndexField asks for an informer: without
		// waiting for it to sync.
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		followed[kind] = err == nil && (o.Unindexed[kind] || inf.AddIndexers(toolscache.Indexers{ownerIndexName: ownerIndex}) == nil)
		if !followed[kind] || o.Wake == nil {
			continue
		}
		// An informer that cannot take a handler has stopped with its
		// cache; the next reconcile asks for a new one.
		_, _ = inf.AddEventHandler(wakeOwner(o.Wake, o.Changed[kind]))
	}
	return followed
}

// wakeOwner wakes an object's resource when changed says its update is
// worth it. Without changed, that is an update without a new generation,
// which is a change of its status or of what others keep in its metadata,
// and a deletion. A new generation is most often the provider's own apply,
// which its reconcile already follows.
func wakeOwner(wake WakeFn, changed ChangedFn) toolscache.ResourceEventHandlerFuncs {
	var h toolscache.ResourceEventHandlerFuncs
	if changed == nil {
		changed = statusChanged
		h.DeleteFunc = func(obj any) {
			if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			if o, ok := obj.(client.Object); ok {
				wakeOf(wake, o)
			}
		}
	}
	h.UpdateFunc = func(was, is any) {
		o, okWas := was.(client.Object)
		n, okIs := is.(client.Object)
		if okWas && okIs && changed(o, n) {
			wakeOf(wake, n)
		}
	}
	return h
}

// statusChanged is true of an update without a new generation.
func statusChanged(was, is client.Object) bool {
	return was.GetGeneration() == is.GetGeneration() && was.GetResourceVersion() != is.GetResourceVersion()
}

// wakeOf wakes the resource whose labels o carries, if render made o.
func wakeOf(wake WakeFn, o client.Object) {
	if !rendered(o) {
		return
	}
	l := o.GetLabels()
	wake(l[render.LabelKind], o.GetNamespace(), l[render.LabelResource])
}
