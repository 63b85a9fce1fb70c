package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	toolscache "k8s.io/client-go/tools/cache"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestStateCounts(t *testing.T) {
	fn := func(cs ...xpv2.Condition) *v1alpha1.LambdaFunction {
		f := &v1alpha1.LambdaFunction{}
		f.SetConditions(cs...)
		return f
	}
	creating, ready := fn(xpv2.Creating(), xpv2.ReconcileSuccess()), fn(xpv2.Available(), xpv2.ReconcileSuccess())
	cases := map[string]struct {
		reason string
		events func(s stateCounts)
		want   state
	}{
		"Added": {
			reason: "A new resource exists; it is Synced but not yet Ready.",
			events: func(s stateCounts) { s.OnAdd(creating, true) },
			want:   state{exists: 1, synced: 1},
		},
		"BecameReady": {
			reason: "A resource that turns Ready moves to the Ready count and is not counted twice.",
			events: func(s stateCounts) { s.OnAdd(creating, false); s.OnUpdate(creating, ready) },
			want:   state{exists: 1, ready: 1, synced: 1},
		},
		"Resync": {
			reason: "A resync repeats a resource as it was: no count changes.",
			events: func(s stateCounts) { s.OnAdd(ready, false); s.OnUpdate(ready, ready) },
			want:   state{exists: 1, ready: 1, synced: 1},
		},
		"Deleted": {
			reason: "A deleted resource leaves every count it was in.",
			events: func(s stateCounts) { s.OnAdd(ready, false); s.OnDelete(ready) },
		},
		"DeletedUnseen": {
			reason: "A deletion the watch missed arrives as a tombstone, and leaves the counts too.",
			events: func(s stateCounts) {
				s.OnAdd(ready, false)
				s.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "team/hello", Obj: ready})
			},
		},
		"NotAResource": {
			reason: "What is not a managed resource counts nowhere.",
			events: func(s stateCounts) { s.OnAdd("hello", false) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := func() prometheus.Gauge { return prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}) }
			s := stateCounts{exists: g(), ready: g(), synced: g()}
			tc.events(s)
			got := state{exists: testutil.ToFloat64(s.exists), ready: testutil.ToFloat64(s.ready), synced: testutil.ToFloat64(s.synced)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(state{})); diff != "" {
				t.Errorf("%s\ncounts: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
