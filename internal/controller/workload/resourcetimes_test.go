package workload

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A timesStep is one thing the managed reconciler tells resourceTimes about
// a function, after seconds since the function's creation.
type timesStep struct {
	after           time.Duration
	do              func(t *resourceTimes, mg resource.Managed)
	namespace, name string
	synced, ready   corev1.ConditionStatus
	// deletedAfter, when set, is when the function's deletion began.
	deletedAfter time.Duration
}

// observed are a histogram's sample count and sum.
type observed struct {
	Count uint64
	Sum   float64
}

func TestResourceTimes(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	reconciled := (*resourceTimes).reconciled
	unchanged := (*resourceTimes).unchanged
	drifted := (*resourceTimes).drifted
	deleted := (*resourceTimes).deleted
	fresh := func(after time.Duration, do func(*resourceTimes, resource.Managed)) timesStep {
		return timesStep{after: after, do: do, namespace: "team", name: "hello", synced: corev1.ConditionUnknown, ready: corev1.ConditionUnknown}
	}
	ready := func(after time.Duration, do func(*resourceTimes, resource.Managed)) timesStep {
		return timesStep{after: after, do: do, namespace: "team", name: "hello", synced: corev1.ConditionTrue, ready: corev1.ConditionTrue}
	}
	cases := map[string]struct {
		reason string
		steps  []timesStep
		want   map[string]observed
	}{
		"FirstReconcileAndFirstReady": {
			reason: "A function's first reconcile observes how long it waited, and the first time it is found Ready how long that took; later polls observe neither again.",
			steps:  []timesStep{fresh(2*time.Second, reconciled), ready(10*time.Second, reconciled), ready(10*time.Second, unchanged), ready(40*time.Second, reconciled), ready(40*time.Second, unchanged)},
			want:   map[string]observed{"firstReconcile": {1, 2}, "firstReady": {1, 10}},
		},
		"NotReadyYet": {
			reason: "An up-to-date function that is not Ready yet is not observed Ready.",
			steps: []timesStep{
				fresh(time.Second, reconciled),
				{after: 5 * time.Second, do: unchanged, namespace: "team", name: "hello", synced: corev1.ConditionTrue, ready: corev1.ConditionFalse},
				ready(20*time.Second, unchanged),
			},
			want: map[string]observed{"firstReconcile": {1, 1}, "firstReady": {1, 20}},
		},
		"ReconciledBeforeThisProcess": {
			reason: "A function some earlier process reconciled is not observed first reconciled or first Ready.",
			steps:  []timesStep{ready(time.Hour, reconciled), ready(time.Hour, unchanged)},
			want:   map[string]observed{},
		},
		"DriftSinceLastUpToDate": {
			reason: "An update observes how long since the function was last found up to date.",
			steps:  []timesStep{ready(time.Minute, unchanged), ready(90*time.Second, drifted), ready(100*time.Second, drifted)},
			want:   map[string]observed{"drift": {2, 40}},
		},
		"DriftNeverUpToDate": {
			reason: "An update of a function this process never found up to date observes nothing.",
			steps:  []timesStep{ready(time.Minute, drifted)},
			want:   map[string]observed{},
		},
		"SameNameOtherNamespace": {
			reason: "A function of the same name in another namespace has its own times.",
			steps: []timesStep{
				ready(time.Minute, unchanged),
				{after: 2 * time.Minute, do: drifted, namespace: "other", name: "hello", synced: corev1.ConditionTrue, ready: corev1.ConditionTrue},
			},
			want: map[string]observed{},
		},
		"DeletedIsForgotten": {
			reason: "A deletion observes how long it took, and forgets the function's times.",
			steps: []timesStep{
				fresh(time.Second, reconciled),
				ready(time.Minute, unchanged),
				{after: 2 * time.Minute, do: deleted, namespace: "team", name: "hello", synced: corev1.ConditionTrue, ready: corev1.ConditionFalse, deletedAfter: 110 * time.Second},
				ready(3*time.Minute, drifted),
			},
			want: map[string]observed{"firstReconcile": {1, 1}, "firstReady": {1, 60}, "deletion": {1, 10}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newTestHistograms()
			times := newResourceTimes(v1alpha1.LambdaFunctionGroupVersionKind, h)
			for _, s := range tc.steps {
				times.now = func() time.Time { return created.Add(s.after) }
				mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.name, CreationTimestamp: metav1.NewTime(created)}}
				if s.deletedAfter > 0 {
					mg.SetDeletionTimestamp(&metav1.Time{Time: created.Add(s.deletedAfter)})
				}
				mg.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: s.synced}, xpv2.Condition{Type: xpv2.TypeReady, Status: s.ready})
				s.do(times, mg)
			}
			got := map[string]observed{}
			for what, v := range map[string]*prometheus.HistogramVec{"firstReconcile": h.firstReconcile, "firstReady": h.firstReady, "deletion": h.deletion, "drift": h.drift} {
				if o := sampled(t, v, times.gvk); o.Count > 0 {
					got[what] = o
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nobserved: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestResourceTimesForgetAtDeletion checks that no time stays behind for a
// deleted function, and that notes a rush left behind give their room back.
func TestResourceTimesForgetAtDeletion(t *testing.T) {
	times := newResourceTimes(v1alpha1.LambdaFunctionGroupVersionKind, newTestHistograms())
	mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}
	times.reconciled(mg)
	times.unchanged(mg)
	times.deleted(mg)
	if n := len(times.upToDate.set) + len(times.fresh.set); n != 0 {
		t.Errorf("%d times kept for a deleted function, want none", n)
	}
}

// newTestHistograms are four histograms of their own for a test.
func newTestHistograms() timeHistograms {
	h := func() *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "test_seconds"}, []string{"gvk"})
	}
	return timeHistograms{firstReconcile: h(), firstReady: h(), deletion: h(), drift: h()}
}

// sampled is how many samples h's series of these labels took, and their sum.
func sampled(t *testing.T, h *prometheus.HistogramVec, labels prometheus.Labels) observed {
	t.Helper()
	m := &dto.Metric{}
	if err := h.With(labels).(prometheus.Histogram).Write(m); err != nil { //nolint:forcetypeassert // A HistogramVec's series are Histograms.
		t.Fatal(err)
	}
	return observed{Count: m.GetHistogram().GetSampleCount(), Sum: m.GetHistogram().GetSampleSum()}
}
