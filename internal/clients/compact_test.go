package clients

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	toolscache "k8s.io/client-go/tools/cache"

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
