package main

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// A watcher keeps the benchmark's view of the control plane in informers, so
// that looking every tick costs the API server nothing but watch events.
type watcher struct {
	cache.Cache
	cfg     *rest.Config
	managed schema.GroupVersionKind
}

// newWatcher starts informers in the benchmark namespace.
func newWatcher(ctx context.Context, cfg *rest.Config, managed schema.GroupVersionKind) (*watcher, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{benchNamespace: {}}})
	if err != nil {
		return nil, err
	}
	if err := indexRevisions(ctx, c); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the benchmark's informers did not sync")
	}
	return &watcher{Cache: c, cfg: cfg, managed: managed}, nil
}

// count is how many objects of a list's kind match; a nil match counts all.
// A list the cache cannot give counts as none. The objects are the cache's
// own, not copies: at 10,000 copying every Service each tick took the
// benchmark most of a core, which the provider and the API server share.
func (w *watcher) count(l client.ObjectList, match func(client.Object) bool) int {
	if err := w.List(context.Background(), l, client.UnsafeDisableDeepCopy); err != nil {
		return 0
	}
	n := 0
	_ = meta.EachListItem(l, func(o runtime.Object) error {
		if co, ok := o.(client.Object); ok && (match == nil || match(co)) {
			n++
		}
		return nil
	})
	return n
}

// countManaged is how many of the contender's managed resources match.
func (w *watcher) countManaged(match func(*unstructured.Unstructured) bool) int {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(w.managed.GroupVersion().WithKind(w.managed.Kind + "List"))
	return w.count(l, func(o client.Object) bool { return match(o.(*unstructured.Unstructured)) }) //nolint:forcetypeassert // An unstructured list holds unstructured objects.
}
