package clients

import (
	"encoding/json"
	"maps"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"knative.dev/pkg/apis"

	xpmeta "github.com/crossplane/crossplane-runtime/v2/pkg/meta"

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
  "spec": {"template": {
    "metadata": {"labels": {"app.kubernetes.io/managed-by": "provider-knative-lambda", "app.kubernetes.io/name": "hello"}},
    "spec": {"containers": [{
      "name": "function", "image": "ghcr.io/acme/hello:v1",
      "env": [{"name": "LAMBDA_SOURCE", "value": "/lambda/team/hello"}],
      "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
      "readinessProbe": {"tcpSocket": {"port": 8080}},
      "resources": {"limits": {"cpu": "1", "memory": "256Mi"}},
      "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}
    }]}
  }},
  "status": {
    "url": "http://hello.team.example.com", "address": {"url": "http://hello.team.example.com"},
    "latestCreatedRevisionName": "hello-00001", "latestReadyRevisionName": "hello-00001",
    "traffic": [{"latestRevision": true, "percent": 100, "revisionName": "hello-00001"}],
    "conditions": [{"lastTransitionTime": "2026-11-26T08:35:46Z", "status": "True", "type": "Ready"}]
  }
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
		"pod label value":    {a.Spec.Template.Labels["app.kubernetes.io/managed-by"], b.Labels["app.kubernetes.io/managed-by"]},
		"annotation key":     {keyOf(a.Annotations, "lambda.m.crossplane.io/rendered"), keyOf(b.Annotations, "lambda.m.crossplane.io/rendered")},
		"finalizer":          {a.Finalizers[0], b.Finalizers[0]},
		"owner's apiVersion": {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"namespace":          {a.Namespace, b.Namespace},
	}
	for what, pair := range shared {
		if !sameString(pair[0], pair[1]) {
			t.Errorf("the two Services hold two copies of the %s %q, want one", what, pair[0])
		}
	}
	if sameString(a.Annotations["lambda.m.crossplane.io/rendered"], b.Annotations["lambda.m.crossplane.io/rendered"]) {
		t.Error("the two Services share an annotation value; values are hashes and times no two objects share, and are left alone")
	}
	for _, s := range []*servingv1.Service{a, b} {
		if !sameString(s.Labels["app.kubernetes.io/name"], s.Name) {
			t.Error("a label value that is the Service's name is a copy of its own, want the name's string")
		}
	}
	if sameString(a.Labels["app.kubernetes.io/name"], b.Labels["app.kubernetes.io/name"]) {
		t.Error("the two Services share a label value that is their name; a copy kept for every name costs more than it saves")
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

// oneMap is true when a and b are one map, not two of the same content.
func oneMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestKeptStartsAgainWhenFull(t *testing.T) {
	k := newKept(maps.Equal[map[string]string])
	first := map[string]string{"set": "0"}
	if got := k.shared(first); !oneMap(got, first) {
		t.Fatal("the first value was not kept as it came")
	}
	for i := 1; i < maxKept; i++ {
		k.shared(map[string]string{"set": strconv.Itoa(i)})
	}
	if got := k.shared(map[string]string{"set": "0"}); !oneMap(got, first) {
		t.Error("a value decoded again while held was not given the kept one")
	}
	k.shared(map[string]string{"set": "full"})
	again := map[string]string{"set": "0"}
	if got := k.shared(again); !oneMap(got, again) {
		t.Errorf("after %d values, the first was still held; want the table to start again, bounded", maxKept)
	}
	if len(k.items) > maxKept {
		t.Errorf("holds %d values, want at most %d", len(k.items), maxKept)
	}
}

// TestTransformCompactSharesServiceParts decodes two Services as their
// watch would, the second changed as each case says, and checks which
// parts of their containers they share after the transform, and that each
// still holds what it was sent.
func TestTransformCompactSharesServiceParts(t *testing.T) {
	type shared struct{ Security, Probe, Ports, Limits bool }
	cases := map[string]struct {
		reason string
		change func(c *corev1.Container)
		want   shared
	}{
		"Alike": {
			reason: "Parts that render writes alike for every function are kept once.",
			change: func(*corev1.Container) {},
			want:   shared{Security: true, Probe: true, Ports: true, Limits: true},
		},
		"OtherSecurity": {
			reason: "A container whose security context differs keeps its own.",
			change: func(c *corev1.Container) { c.SecurityContext.RunAsNonRoot = nil },
			want:   shared{Probe: true, Ports: true, Limits: true},
		},
		"OtherEncoding": {
			reason: "1000m is the quantity 1 but not its encoding; the cache must hold what the API server sent.",
			change: func(c *corev1.Container) { c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1000m") },
			want:   shared{Security: true, Probe: true, Ports: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			transform := TransformCompact()
			a, b := decodedService(t), decodedService(t)
			tc.change(&b.Spec.Template.Spec.Containers[0])
			wantB := b.DeepCopy()
			wantB.ManagedFields = nil
			for _, s := range []*servingv1.Service{a, b} {
				if _, err := transform(s); err != nil {
					t.Fatal(err)
				}
			}
			ca, cb := a.Spec.Template.Spec.Containers[0], b.Spec.Template.Spec.Containers[0]
			got := shared{
				Security: ca.SecurityContext == cb.SecurityContext,
				Probe:    ca.ReadinessProbe == cb.ReadinessProbe,
				Ports:    &ca.Ports[0] == &cb.Ports[0],
				Limits:   reflect.ValueOf(ca.Resources.Limits).UnsafePointer() == reflect.ValueOf(cb.Resources.Limits).UnsafePointer(),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nshared parts: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(encoded(t, wantB), encoded(t, b)); diff != "" {
				t.Errorf("%s\nthe second Service as it encodes: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// encoded is o's JSON, which tells apart what semantic equality does not.
func encoded(t *testing.T, o any) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTransformCompactSharesWithinStatus checks that a Service's status
// holds its URL once when its address is that URL, and its own address
// when not, and one copy of the name of the Revision that is both latest
// and ready.
func TestTransformCompactSharesWithinStatus(t *testing.T) {
	cases := map[string]struct {
		reason  string
		address string
		wantOne bool
	}{
		"AddressIsURL": {reason: "The address Knative writes is most often the URL.", address: "http://hello.team.example.com", wantOne: true},
		"OtherAddress": {reason: "An address other than the URL stays its own.", address: "http://hello.team.svc.cluster.local"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := decodedService(t)
			s.Status.Address.URL = apis.HTTP(strings.TrimPrefix(tc.address, "http://"))
			want := s.DeepCopy()
			want.ManagedFields = nil
			if _, err := TransformCompact()(s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, s); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if one := s.Status.Address.URL == s.Status.URL; one != tc.wantOne {
				t.Errorf("%s\naddress and URL are one: want %t, got %t", tc.reason, tc.wantOne, one)
			}
			st := s.Status
			if !sameString(st.LatestCreatedRevisionName, st.LatestReadyRevisionName) || !sameString(st.Traffic[0].RevisionName, st.LatestReadyRevisionName) {
				t.Errorf("%s\nthe latest Revision's name is held more than once", tc.reason)
			}
		})
	}
}

// TestTransformCompactSharesManagedWords decodes two functions as their
// watch would, and checks which strings they share after the transform,
// which a function shares within its status, and that each still holds
// what it was sent.
func TestTransformCompactSharesManagedWords(t *testing.T) {
	decoded := func() *v1alpha1.LambdaFunction {
		f := &v1alpha1.LambdaFunction{}
		raw := `{"metadata": {"name": "hello", "namespace": "team"},
  "spec": {"providerConfigRef": {"kind": "ProviderConfig", "name": "default"}, "managementPolicies": ["*"], "forProvider": {}},
  "status": {"conditions": [
    {"type": "Ready", "status": "False", "reason": "Creating", "message": "Service hello is not ready", "lastTransitionTime": "2026-11-26T08:35:46Z"}],
    "atProvider": {"phase": "Deploying", "latestReadyRevision": "hello-00001", "traffic": [{"revisionName": "hello-00001", "percent": 100}]}}}`
		if err := json.Unmarshal([]byte(raw), f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// unique keeps a word's one copy only while a handle to it lives, and
	// canonical keeps none: a collection between the two transforms lets
	// the second make a copy of its own, which the test would take for the
	// transform not sharing. The sharing is the collector's to undo; the
	// test checks the transform's part of it.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	a, b := decoded(), decoded()
	transform := TransformCompact()
	for _, f := range []*v1alpha1.LambdaFunction{a, b} {
		if _, err := transform(f); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(decoded(), b); diff != "" {
		t.Errorf("function: -want, +got:\n%s", diff)
	}
	ca, cb := a.Status.Conditions[0], b.Status.Conditions[0]
	pa, pb := a.Spec.ProviderConfigReference, b.Spec.ProviderConfigReference
	for what, pair := range map[string][2]string{
		"condition type":       {string(ca.Type), string(cb.Type)},
		"condition status":     {string(ca.Status), string(cb.Status)},
		"condition reason":     {string(ca.Reason), string(cb.Reason)},
		"provider config":      {pa.Name, pb.Name},
		"provider config kind": {pa.Kind, pb.Kind},
		"phase":                {string(a.Status.AtProvider.Phase), string(b.Status.AtProvider.Phase)},
	} {
		if !sameString(pair[0], pair[1]) {
			t.Errorf("the two functions hold two copies of the %s %q, want one", what, pair[0])
		}
	}
	if sameString(ca.Message, cb.Message) {
		t.Error("the two functions share a condition message; messages are their own")
	}
	at := a.Status.AtProvider
	if !sameString(at.Traffic[0].RevisionName, at.LatestReadyRevision) {
		t.Error("the Revision traffic goes to is a copy of the latest ready one's name, want that name's string")
	}
	if sameString(at.LatestReadyRevision, b.Status.AtProvider.LatestReadyRevision) {
		t.Error("the two functions share their Revision's name; a copy kept for every name costs more than it saves")
	}
}

// sameString is true when x and y are one copy: their bytes are at one
// address.
func sameString(x, y string) bool {
	return unsafe.StringData(x) == unsafe.StringData(y) //nolint:gosec // Only compares addresses.
}

func TestKeptPassesNone(t *testing.T) {
	cases := map[string]struct {
		reason string
		shared func() int
	}{
		"NilPointer": {
			reason: "A container without a probe has nothing to share.",
			shared: func() int {
				k := newKept(sameEncoding[*corev1.Probe])
				if got := k.shared(nil); got != nil {
					t.Errorf("shared(nil) = %v", got)
				}
				return len(k.items)
			},
		},
		"EmptyMap": {
			reason: "An object without labels has nothing to share.",
			shared: func() int {
				k := newKept(maps.Equal[map[string]string])
				k.shared(map[string]string{})
				return len(k.items)
			},
		},
		"EmptySlice": {
			reason: "A container without ports has nothing to share.",
			shared: func() int {
				k := newKept(sameEncoding[[]corev1.ContainerPort])
				k.shared([]corev1.ContainerPort{})
				return len(k.items)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if n := tc.shared(); n != 0 {
				t.Errorf("%s\nthe table holds %d values, want none", tc.reason, n)
			}
		})
	}
}

func TestTransformCompactForgetsCreates(t *testing.T) {
	const at = "2026-11-26T13:40:00Z"
	creates := map[string]string{
		xpmeta.AnnotationKeyExternalCreatePending:   at,
		xpmeta.AnnotationKeyExternalCreateSucceeded: at,
	}
	withPaused := maps.Clone(creates)
	withPaused[xpmeta.AnnotationKeyReconciliationPaused] = "true"
	cases := map[string]struct {
		reason string
		obj    metav1.Object
		want   map[string]string
	}{
		"Function": {
			reason: "A function's notes of its create are dropped, and with them its annotation map.",
			obj:    &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: maps.Clone(creates)}},
		},
		"Agent": {
			reason: "So are an agent's.",
			obj:    &v1alpha1.LambdaAgent{ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: map[string]string{xpmeta.AnnotationKeyExternalCreateFailed: at}}},
		},
		"UsersAnnotation": {
			reason: "Any other annotation stays: the managed reconciler reads one that pauses it.",
			obj:    &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: withPaused}},
			want:   map[string]string{xpmeta.AnnotationKeyReconciliationPaused: "true"},
		},
		"Service": {
			reason: "An object that is not a managed resource keeps them all.",
			obj:    &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: maps.Clone(creates)}},
			want:   creates,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := TransformCompact()(tc.obj); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.obj.GetAnnotations()); diff != "" {
				t.Errorf("%s\nannotations: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
