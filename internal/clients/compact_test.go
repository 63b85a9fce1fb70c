package clients

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// serviceJSON is a Service as the API server sends it: each decode of it
// holds its own copy of every string.
const serviceJSON = `{
  "apiVersion": "serving.knative.dev/v1", "kind": "Service",
  "metadata": {
    "name": "hello", "namespace": "team",
    "labels": {"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello"},
    "annotations": {"lambda.m.crossplane.io/rendered": "5d5e10d6fbdcf481"},
    "finalizers": ["finalizer.example.org"],
    "ownerReferences": [{"apiVersion": "lambda.m.crossplane.io/v1alpha1", "kind": "LambdaFunction", "name": "hello", "uid": "u1"}],
    "managedFields": [{"manager": "provider-knative-lambda", "operation": "Apply"}]
  },
  "spec": {"template": {"metadata": {"labels": {"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello"}}}}
}`

func decodedService(t *testing.T) *servingv1.Service {
	t.Helper()
	s := &servingv1.Service{}
	if err := json.Unmarshal([]byte(serviceJSON), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTransformCompactKeepsValues(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     any
		want   any
	}{
		"Service": {
			reason: "Every value stays as it was; only the managed fields go.",
			in:     decodedService(t),
			want: func() any {
				s := decodedService(t)
				s.ManagedFields = nil
				return s
			}(),
		},
		"NotAnObject": {
			reason: "What is not an object, such as the last state of one deleted while a watch was down, passes as it came.",
			in:     toolscache.DeletedFinalStateUnknown{Key: "team/hello"},
			want:   toolscache.DeletedFinalStateUnknown{Key: "team/hello"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := TransformCompact()(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nTransformCompact: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTransformCompactSharesStrings decodes one Service twice, as two
// watches would, and checks that after the transform both hold the same
// copy of each label, annotation key, finalizer and owner's kind, in their
// metadata and their pods', but their own annotation values.
func TestTransformCompactSharesStrings(t *testing.T) {
	a, b := decodedService(t), decodedService(t)
	for _, s := range []*servingv1.Service{a, b} {
		if _, err := TransformCompact()(s); err != nil {
			t.Fatal(err)
		}
	}
	// Two strings are one copy when their bytes are at one address.
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) } //nolint:gosec // Only compares addresses.
	keyOf := func(m map[string]string, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q in %v", want, m)
		return ""
	}
	shared := map[string][2]string{
		"label key":          {keyOf(a.Labels, "app.kubernetes.io/managed-by"), keyOf(b.Labels, "app.kubernetes.io/managed-by")},
		"label value":        {a.Labels["app.kubernetes.io/managed-by"], b.Labels["app.kubernetes.io/managed-by"]},
		"pod label key":      {keyOf(a.Spec.Template.Labels, "app.kubernetes.io/name"), keyOf(b.Labels, "app.kubernetes.io/name")},
		"pod label value":    {a.Spec.Template.Labels["app.kubernetes.io/name"], b.Labels["app.kubernetes.io/name"]},
		"annotation key":     {keyOf(a.Annotations, "lambda.m.crossplane.io/rendered"), keyOf(b.Annotations, "lambda.m.crossplane.io/rendered")},
		"finalizer":          {a.Finalizers[0], b.Finalizers[0]},
		"owner's apiVersion": {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"namespace":          {a.Namespace, b.Namespace},
	}
	for what, pair := range shared {
		if !same(pair[0], pair[1]) {
			t.Errorf("the two Services hold two copies of the %s %q, want one", what, pair[0])
		}
	}
	if same(a.Annotations["lambda.m.crossplane.io/rendered"], b.Annotations["lambda.m.crossplane.io/rendered"]) {
		t.Error("the two Services share an annotation value; values are hashes and times no two objects share, and are left alone")
	}
	if a.ManagedFields != nil {
		t.Errorf("managed fields kept: %v", a.ManagedFields)
	}
}

// TestTransformCompactSharesPodLabels checks that a Service's pods hold the
// Service's own label map when their labels are the same, and a map of
// their own, with their own labels, when they are not.
func TestTransformCompactSharesPodLabels(t *testing.T) {
	cases := map[string]struct {
		reason    string
		visible   bool
		wantOne   bool
		wantPods  map[string]string
		wantLabel map[string]string
	}{
		"Same": {
			reason:    "Pods labelled as their Service need no map of their own.",
			wantOne:   true,
			wantPods:  map[string]string{"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello"},
			wantLabel: map[string]string{"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello"},
		},
		"ServiceOnly": {
			reason:    "A label only the Service carries, such as its visibility, must not reach its pods.",
			visible:   true,
			wantPods:  map[string]string{"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello"},
			wantLabel: map[string]string{"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello", servingv1.VisibilityLabelKey: servingv1.VisibilityClusterLocal},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := decodedService(t)
			if tc.visible {
				s.Labels[servingv1.VisibilityLabelKey] = servingv1.VisibilityClusterLocal
			}
			if _, err := TransformCompact()(s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabel, s.Labels); diff != "" {
				t.Errorf("%s\nService labels: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantPods, s.Spec.Template.Labels); diff != "" {
				t.Errorf("%s\npod labels: -want, +got:\n%s", tc.reason, diff)
			}
			if one := oneMap(s.Labels, s.Spec.Template.Labels); one != tc.wantOne {
				t.Errorf("%s\nService and pods share one label map: want %t, got %t", tc.reason, tc.wantOne, one)
			}
		})
	}
}

// decodedUsage is a ProviderConfigUsage of the provider config pc, as the
// API server sends it.
func decodedUsage(t *testing.T, name, pc string) *v1alpha1.ProviderConfigUsage {
	t.Helper()
	u := &v1alpha1.ProviderConfigUsage{}
	raw := `{"apiVersion": "lambda.m.crossplane.io/v1alpha1", "kind": "ProviderConfigUsage",
  "metadata": {"name": "` + name + `", "namespace": "team", "labels": {"crossplane.io/provider-config": "` + pc + `", "crossplane.io/provider-config-kind": "ProviderConfig"}}}`
	if err := json.Unmarshal([]byte(raw), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// oneMap is true when a and b are one map, not two of the same content.
func oneMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestTransformCompactSharesUsageLabels decodes usages as their watch
// would, one at a time, and checks that the usages of one provider config
// share one label map after the transform, and those of another do not.
func TestTransformCompactSharesUsageLabels(t *testing.T) {
	transform := TransformCompact()
	configOf := map[string]string{"a1": "default", "a2": "default", "b1": "remote"}
	usages := map[string]*v1alpha1.ProviderConfigUsage{}
	for name, pc := range configOf {
		usages[name] = decodedUsage(t, name, pc)
	}
	for _, name := range []string{"a1", "b1", "a2"} {
		if _, err := transform(usages[name]); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		reason string
		x, y   string
		want   bool
	}{
		"SameConfig":  {reason: "The usages of one provider config carry one label set; one map serves them.", x: "a1", y: "a2", want: true},
		"OtherConfig": {reason: "A usage of another provider config keeps its own labels.", x: "a1", y: "b1", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x, y := usages[tc.x], usages[tc.y]
			if got := oneMap(x.Labels, y.Labels); got != tc.want {
				t.Errorf("%s\n%s and %s share one label map: want %t, got %t", tc.reason, tc.x, tc.y, tc.want, got)
			}
			if diff := cmp.Diff(decodedUsage(t, tc.y, configOf[tc.y]).Labels, y.Labels); diff != "" {
				t.Errorf("%s\n%s's labels: -want, +got:\n%s", tc.reason, tc.y, diff)
			}
		})
	}
}

func TestLabelSetsStartAgainWhenFull(t *testing.T) {
	s := &labelSets{}
	first := map[string]string{"set": "0"}
	if got := s.shared(first); !oneMap(got, first) {
		t.Fatal("the first set was not kept as it came")
	}
	for i := 1; i < maxLabelSets; i++ {
		s.shared(map[string]string{"set": strconv.Itoa(i)})
	}
	if got := s.shared(map[string]string{"set": "0"}); !oneMap(got, first) {
		t.Error("a set decoded again while held was not given the kept map")
	}
	s.shared(map[string]string{"set": "full"})
	again := map[string]string{"set": "0"}
	if got := s.shared(again); !oneMap(got, again) {
		t.Errorf("after %d sets, the first was still held; want the sets to start again, bounded", maxLabelSets)
	}
	if len(s.sets) > maxLabelSets {
		t.Errorf("holds %d sets, want at most %d", len(s.sets), maxLabelSets)
	}
}
