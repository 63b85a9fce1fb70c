package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestSubscriberServed checks that the Triggers delivering to a workload's
// own Knative Service change once the Service has served, and only those:
// the change has Knative resolve the subscriber's address again.
func TestSubscriberServed(t *testing.T) {
	function := func(o Observed) (*Objects, error) {
		return Function(FunctionInput{Namespace: "shop", Name: "orders", Observed: o, Spec: v1alpha1.LambdaFunctionParameters{
			Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/orders", Tag: ptr.To[v1alpha1.ImageTag]("v1")}},
			Eventing: &v1alpha1.FunctionEventing{Triggers: []v1alpha1.Trigger{{Name: "created"}, {Name: "paid"}}},
		}})
	}
	agent := func(o Observed) (*Objects, error) {
		o.ForwardAddresses = map[string]string{forwardToTriage: forwardToTriageAddress}
		return leads(o)
	}
	cases := map[string]struct {
		reason string
		render func(Observed) (*Objects, error)
		served bool
		// want is whether each Trigger, in render's order, carries the
		// annotation.
		want []bool
	}{
		"FunctionNotServed": {
			reason: "Before its Service has served, a function's Triggers carry nothing.",
			render: function,
			want:   []bool{false, false},
		},
		"FunctionServed": {
			reason: "Once its Service has served, each of a function's Triggers says so.",
			render: function,
			served: true,
			want:   []bool{true, true},
		},
		"AgentServed": {
			reason: "An agent's subscription delivers to its Service and says so; its forward delivers to the relay, whose Service is another.",
			render: agent,
			served: true,
			want:   []bool{true, false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := tc.render(Observed{Served: tc.served})
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			for _, tr := range out.Triggers {
				got = append(got, tr.Annotations[AnnotationSubscriberServed] == "true")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nannotated Triggers: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
