package render

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestTriggerNamesDoNotCollide renders pairs of resources, or two Triggers
// of one, whose readable parts join to one name. Before, each pair rendered
// one Trigger name twice, and the two fought over it for ever.
func TestTriggerNamesDoNotCollide(t *testing.T) {
	fn := func(name string, triggers ...string) []string {
		t.Helper()
		spec := v1alpha1.LambdaFunctionParameters{
			Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: ptr.To(v1alpha1.ImageTag("v1"))}},
			Eventing: &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{Name: "default"}},
		}
		for _, tr := range triggers {
			spec.Eventing.Triggers = append(spec.Eventing.Triggers, v1alpha1.Trigger{Name: v1alpha1.DNSLabel(tr), Filters: v1alpha1.Filters{"type": "t." + tr}})
		}
		objs, err := Function(FunctionInput{Namespace: "apps", Name: name, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return triggerNames(objs)
	}
	agent := func(name string, eventing *v1alpha1.AgentEventing) []string {
		t.Helper()
		objs, err := Agent(AgentInput{Namespace: "apps", Name: name, Spec: v1alpha1.LambdaAgentParameters{
			Image:    v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To(v1alpha1.ImageTag("v1"))},
			AI:       v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To(v1alpha1.HTTPURL("http://ollama:11434")), Model: "llama3.2"},
			Eventing: eventing,
		}, Observed: Observed{ForwardAddresses: map[string]string{ForwardTargetKey(v1alpha1.ForwardTarget{Broker: ptr.To(v1alpha1.DNSLabel("default"))}): "http://broker.apps/default"}}})
		if err != nil {
			t.Fatal(err)
		}
		return triggerNames(objs)
	}
	cases := map[string]struct {
		reason string
		names  []string
	}{
		"JoinedAcrossFunctions": {
			reason: "Function a's trigger b-c and function a-b's trigger c join to a-b-c.",
			names:  append(fn("a", "b-c"), fn("a-b", "c")...),
		},
		"FunctionAndAgent": {
			reason: "A function and an agent of one name with a trigger and a subscription of one name.",
			names: append(fn("x", "orders"), agent("x", &v1alpha1.AgentEventing{
				Subscriptions: []v1alpha1.Subscription{{Name: "orders", EventType: "t.orders"}},
			})...),
		},
		"SubscriptionAndForward": {
			reason: "An agent's subscription f-0 and the first type of its forward f.",
			names: agent("x", &v1alpha1.AgentEventing{
				Subscriptions: []v1alpha1.Subscription{{Name: "f-0", EventType: "t.a"}},
				Forwards:      []v1alpha1.Forward{{Name: "f", EventTypes: []string{"t.b"}, Target: v1alpha1.ForwardTarget{Broker: ptr.To(v1alpha1.DNSLabel("default"))}}},
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, n := range tc.names {
				if seen[n] {
					t.Errorf("\n%s\nTrigger %s is rendered twice among %v", tc.reason, n, tc.names)
				}
				seen[n] = true
			}
		})
	}
	long := TriggerName(v1alpha1.LambdaFunctionKind, strings.Repeat("f", 40), strings.Repeat("t", 63), "trigger/"+strings.Repeat("t", 63))
	if len(long) > maxNameLen || strings.Contains(long, "--") {
		t.Errorf("TriggerName of the longest parts: %q, %d characters; want a DNS label of at most %d", long, len(long), maxNameLen)
	}
}

func triggerNames(objs *Objects) []string {
	out := make([]string, len(objs.Triggers))
	for i, tr := range objs.Triggers {
		out[i] = tr.Name
	}
	return out
}
