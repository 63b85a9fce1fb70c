package usage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// Start fills the record from the API server's usages, listed once and
// then watched, until ctx is done. c lists and watches them.
func (u *Usages) Start(ctx context.Context, c client.WithWatch) {
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l := &lists.ProviderConfigUsageList{}
			return l, c.List(ctx, l, &client.ListOptions{Raw: &o})
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &lists.ProviderConfigUsageList{}, &client.ListOptions{Raw: &o})
		},
	}
	toolscache.NewReflectorWithOptions(lw, &v1alpha1.ProviderConfigUsage{}, reflected{u}, toolscache.ReflectorOptions{Name: "provider config usages"}).RunWithContext(ctx)
}

// Woken is a source of the configs of kind whose users changed, each
// queued once its users settle. The record asks no controller to count
// before its source starts; a controller counts each config as it starts.
func (u *Usages) Woken(kind string) source.Source {
	return source.Func(func(_ context.Context, q queue) error {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.queues[kind] = q
		return nil
	})
}

// reflected is the record as a reflector's store.
type reflected struct {
	*Usages
}

// Add records a usage the API server added.
func (r reflected) Add(obj any) error {
	if pcu, ok := obj.(*v1alpha1.ProviderConfigUsage); ok {
		r.putUsage(pcu)
	}
	return nil
}

// Update records a usage the API server updated.
func (r reflected) Update(obj any) error { return r.Add(obj) }

// Delete forgets a usage the API server deleted.
func (r reflected) Delete(obj any) error {
	if pcu, ok := obj.(*v1alpha1.ProviderConfigUsage); ok {
		r.remove(pcu.Namespace, pcu.Name)
	}
	return nil
}

// Replace records list in place of every usage, as after a new list. The
// configs whose users it changes are counted again.
func (r reflected) Replace(list []any, _ string) error {
	gone := map[types.NamespacedName]bool{}
	r.mu.Lock()
	for name := range r.of {
		gone[types.NamespacedName{Name: name}] = true
	}
	for nn := range r.stale {
		gone[nn] = true
	}
	r.mu.Unlock()
	for _, obj := range list {
		if pcu, ok := obj.(*v1alpha1.ProviderConfigUsage); ok {
			delete(gone, types.NamespacedName{Name: pcu.Name})
			delete(gone, types.NamespacedName{Namespace: pcu.Namespace, Name: pcu.Name})
			r.putUsage(pcu)
		}
	}
	for nn := range gone {
		r.remove(nn.Namespace, nn.Name)
	}
	r.listedOnce.Do(func() { close(r.listed) })
	return nil
}

// Resync does nothing: the record has no handlers to resync.
func (r reflected) Resync() error { return nil }
