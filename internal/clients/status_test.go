package clients

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestSameStatus(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	fn := func(change func(*v1alpha1.LambdaFunction)) *v1alpha1.LambdaFunction {
		f := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1}}
		f.SetConditions(xpv2.Available().WithObservedGeneration(1))
		f.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at)
		f.Status.AtProvider.URL = "http://a.ns.example.com"
		if change != nil {
			change(f)
		}
		return f
	}
	u := func(phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"x": 1}, "status": map[string]any{"phase": phase}}}
	}
	cases := map[string]struct {
		reason string
		a, b   runtime.Object
		want   bool
	}{
		"Same": {
			reason: "Equal statuses are the same.",
			a:      fn(nil), b: fn(nil),
			want: true,
		},
		"SpecDiffers": {
			reason: "Only the status counts: a changed spec is not a status update.",
			a:      fn(nil), b: fn(func(f *v1alpha1.LambdaFunction) { f.Spec.ForProvider.Source.Inline = &v1alpha1.InlineSource{Code: "x"} }),
			want: true,
		},
		"SameSecond": {
			reason: "Times are compared as they are sent, to the second: a time read back from the API server equals the one written.",
			a:      fn(nil), b: fn(func(f *v1alpha1.LambdaFunction) {
				f.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(300 * time.Millisecond))
			}),
			want: true,
		},
		"ConditionDiffers": {
			reason: "A condition that changed is a status update.",
			a:      fn(nil), b: fn(func(f *v1alpha1.LambdaFunction) { f.SetConditions(xpv2.Unavailable()) }),
			want: false,
		},
		"ObservationDiffers": {
			reason: "An observation that changed is a status update.",
			a:      fn(nil), b: fn(func(f *v1alpha1.LambdaFunction) { f.Status.AtProvider.URL = "" }),
			want: false,
		},
		"UnstructuredSame": {
			reason: "An object without a typed status is compared on its status field.",
			a:      u("Ready"), b: u("Ready"),
			want: true,
		},
		"UnstructuredDiffers": {
			reason: "An object without a typed status is compared on its status field.",
			a:      u("Ready"), b: u("Failed"),
			want: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sameStatus(tc.a, tc.b)); diff != "" {
				t.Errorf("%s\nsameStatus(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// BenchmarkSameStatus is what the status writer does at the end of every
// reconcile: compare the status to write with the cache's.
func BenchmarkSameStatus(b *testing.B) {
	fn := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b", Generation: 1}}
	fn.Spec.ForProvider.Source.Inline = &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}
	fn.SetConditions(xpv2.Available().WithObservedGeneration(1), xpv2.ReconcileSuccess())
	fn.Status.AtProvider.URL = "http://a.b.example.com"
	cached := fn.DeepCopy()
	b.ReportAllocs()
	for b.Loop() {
		if !sameStatus(fn, cached) {
			b.Fatal("a copy's status differs")
		}
	}
}
