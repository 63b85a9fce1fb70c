package render

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// rendered returns the AnnotationRendered of every object of a prebuilt
// function that creates its Broker and has one Trigger, after change.
func rendered(t *testing.T, change func(*v1alpha1.LambdaFunctionParameters)) map[string]string {
	t.Helper()
	tag := v1alpha1.ImageTag("v1")
	spec := v1alpha1.LambdaFunctionParameters{
		Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: &tag}},
		Scaling:  &v1alpha1.Scaling{MaxReplicas: ptr.To[int32](5)},
		Workload: &v1alpha1.WorkloadSettings{Labels: map[string]string{"team": "payments"}},
		Eventing: &v1alpha1.FunctionEventing{
			Broker:   &v1alpha1.Broker{Name: "orders", Create: true},
			Triggers: []v1alpha1.Trigger{{Name: "placed", Filters: v1alpha1.Filters{"type": "order.placed", "source": "shop"}}},
		},
	}
	change(&spec)
	out, err := Function(FunctionInput{Namespace: "apps", Name: "fn", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range out.All() {
		got[o.GetObjectKind().GroupVersionKind().Kind] = o.GetAnnotations()[AnnotationRendered]
	}
	return got
}

func TestRenderedHash(t *testing.T) {
	base := rendered(t, func(*v1alpha1.LambdaFunctionParameters) {})
	if diff := cmp.Diff([]string{"Broker", "Service", "Trigger"}, slices.Sorted(maps.Keys(base))); diff != "" {
		t.Fatalf("rendered kinds: -want, +got:\n%s", diff)
	}
	for kind, h := range base {
		if len(h) != renderedHashLen {
			t.Fatalf("%s carries %s %q; want %d hex digits", kind, AnnotationRendered, h, renderedHashLen)
		}
	}
	cases := map[string]struct {
		reason  string
		change  func(*v1alpha1.LambdaFunctionParameters)
		changed []string
	}{
		"Unchanged": {
			reason: "A second render of the same spec carries the same hashes: a provider at rest writes nothing.",
			change: func(*v1alpha1.LambdaFunctionParameters) {},
		},
		"BoundRemoved": {
			reason:  "A scaling bound taken out leaves every other field of the Service as it was; only the hash says the live one holds more.",
			change:  func(s *v1alpha1.LambdaFunctionParameters) { s.Scaling.MaxReplicas = nil },
			changed: []string{"Service"},
		},
		"LabelRemoved": {
			reason:  "A workload label taken out changes the Service's hash, and no other object's.",
			change:  func(s *v1alpha1.LambdaFunctionParameters) { s.Workload = nil },
			changed: []string{"Service"},
		},
		"FilterRemoved": {
			reason:  "A Trigger filter taken out changes the Trigger's hash, and not the Service's.",
			change:  func(s *v1alpha1.LambdaFunctionParameters) { delete(s.Eventing.Triggers[0].Filters, "source") },
			changed: []string{"Trigger"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rendered(t, tc.change)
			var changed []string
			for _, kind := range []string{"Broker", "Service", "Trigger"} {
				if got[kind] != base[kind] {
					changed = append(changed, kind)
				}
			}
			if diff := cmp.Diff(tc.changed, changed); diff != "" {
				t.Errorf("%s\nobjects whose hash changed: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestBrokerStampSharedByCreators checks that two functions that create one
// Broker render it with the same stamp, each with its own creator's
// annotation, and lend its JSON with that annotation: stamps that differed
// had the two take the Broker from each other at every poll.
func TestBrokerStampSharedByCreators(t *testing.T) {
	spec := v1alpha1.LambdaFunctionParameters{
		Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: ptr.To(v1alpha1.ImageTag("v1"))}},
		Eventing: &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{Name: "orders", Create: true}},
	}
	stamps := map[string]string{}
	for _, name := range []string{"first", "second"} {
		var lent map[string]any
		out, err := FunctionEncoded(FunctionInput{Namespace: "apps", Name: name, Spec: spec}, func(o kube.Object, b []byte, _ []Verbatim) error {
			if o.GetObjectKind().GroupVersionKind().Kind == "Broker" {
				return json.Unmarshal(b, &lent)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := CreatorAnnotation(v1alpha1.LambdaFunctionKind, name)
		if diff := cmp.Diff([]string{want}, Creators(out.Broker)); diff != "" {
			t.Errorf("%s's Broker: creators: -want, +got:\n%s", name, diff)
		}
		annotations, _ := lent["metadata"].(map[string]any)["annotations"].(map[string]any)
		if annotations[want] != "true" {
			t.Errorf("%s's Broker was lent with annotations %v; want %s", name, annotations, want)
		}
		stamps[name] = out.Broker.Annotations[AnnotationRendered]
	}
	if stamps["first"] != stamps["second"] {
		t.Errorf("two creators stamp one Broker %q and %q; want one stamp", stamps["first"], stamps["second"])
	}
}
