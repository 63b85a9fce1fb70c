package config

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestSettled(t *testing.T) {
	// Every event asks for the config the usage names.
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetLabels()["config"]}}}
	})
	usage := func(config string) *v1alpha1.ProviderConfigUsage {
		u := &v1alpha1.ProviderConfigUsage{}
		u.SetLabels(map[string]string{"config": config})
		return u
	}
	cases := map[string]struct {
		reason string
		events func(ctx context.Context, h handler.EventHandler, q queue)
		// now and then are the requests queued at once and after the wait.
		now, then []string
	}{
		"Burst": {
			reason: "A hundred usages of one config created at once ask for one count, after the wait.",
			events: func(ctx context.Context, h handler.EventHandler, q queue) {
				for range 100 {
					h.Create(ctx, event.CreateEvent{Object: usage("default")}, q)
				}
			},
			then: []string{"default"},
		},
		"TwoConfigs": {
			reason: "Usages of two configs ask for a count of each.",
			events: func(ctx context.Context, h handler.EventHandler, q queue) {
				h.Create(ctx, event.CreateEvent{Object: usage("a")}, q)
				h.Delete(ctx, event.DeleteEvent{Object: usage("b")}, q)
				h.Update(ctx, event.UpdateEvent{ObjectOld: usage("a"), ObjectNew: usage("a")}, q)
			},
			then: []string{"a", "b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			const d = 200 * time.Millisecond
			tc.events(ctx, settled(byName, d), q)
			if diff := cmp.Diff(tc.now, drain(q)); diff != "" {
				t.Errorf("%s\nqueued at once: -want, +got:\n%s", tc.reason, diff)
			}
			for deadline := time.Now().Add(10 * d); q.Len() < len(tc.then) && time.Now().Before(deadline); {
				time.Sleep(d / 10)
			}
			if diff := cmp.Diff(tc.then, drain(q)); diff != "" {
				t.Errorf("%s\nqueued after the wait: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// drain takes what is queued now, sorted by name.
func drain(q queue) []string {
	var names []string
	for q.Len() > 0 {
		r, _ := q.Get()
		names = append(names, r.Name)
		q.Done(r)
	}
	slices.Sort(names)
	return names
}
