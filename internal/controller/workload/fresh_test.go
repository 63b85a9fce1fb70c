package workload

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

func TestFreshReconciler(t *testing.T) {
	s, err := kinds.ManagerScheme()
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "team", Name: "hello"}
	cases := map[string]struct {
		reason string
		cached bool
		// wrote is true when the provider wrote the resource after the
		// cache's copy.
		wrote bool
		// wake is true when the reconciler can be woken.
		wake  bool
		want  reconcile.Result
		inner bool
		// woken are the wakes once the cache delivers the write.
		woken []reconcile.Request
	}{
		"CacheBehind": {
			reason: "A resource whose cached copy predates the provider's last write is looked at again soon, without reconciling from the stale copy.",
			cached: true, wrote: true, want: reconcile.Result{RequeueAfter: staleRequeue},
		},
		"CacheBehindWoken": {
			reason: "A reconciler that can be woken is woken once the cache delivers the write, and otherwise looks again only when the write is no longer waited for.",
			cached: true, wrote: true, wake: true, want: reconcile.Result{RequeueAfter: clients.DefaultWriteWait},
			woken: []reconcile.Request{{NamespacedName: key}},
		},
		"CacheCaughtUp": {
			reason: "A resource whose cache has seen every write is reconciled.",
			cached: true, inner: true,
		},
		"NotCached": {
			reason: "A resource the cache does not hold is left to the reconcile, which reports it.",
			wrote:  true, inner: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s)
			if tc.cached {
				b = b.WithObjects(&v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
			}
			cache := b.Build()
			writes := clients.NewWrites(clients.DefaultWriteWait)
			writes.Follow(LambdaFunction.GVK)
			mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			if tc.wrote {
				// The provider's write goes to the API server, where the
				// resource was as the cache holds it; the cache does not
				// see the write.
				server := clients.NewWriteRecorder(fake.NewClientBuilder().WithScheme(s).WithObjects(mg).Build(), writes)
				if err := server.Get(context.Background(), key, mg); err != nil {
					t.Fatal(err)
				}
				mg.Labels = map[string]string{"written": "after"}
				if err := server.Update(context.Background(), mg); err != nil {
					t.Fatal(err)
				}
			}
			ran := false
			var woken []reconcile.Request
			f := &freshReconciler[*v1alpha1.LambdaFunction]{kind: LambdaFunction, cache: cache, writes: writes, inner: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				ran = true
				return reconcile.Result{}, nil
			})}
			if tc.wake {
				f.wake = func(r reconcile.Request) { woken = append(woken, r) }
			}
			got, err := f.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nresult: -want, +got:\n%s", tc.reason, diff)
			}
			if ran != tc.inner {
				t.Errorf("%s\nthe inner reconcile ran: %t, want %t", tc.reason, ran, tc.inner)
			}
			// The cache delivers the provider's write.
			writes.Cached(LambdaFunction.GVK, mg)
			if diff := cmp.Diff(tc.woken, woken); diff != "" {
				t.Errorf("%s\nwoken: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
