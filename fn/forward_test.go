package main

import (
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"sigs.k8s.io/yaml"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const leadsSpec = `
image: {repository: ghcr.io/acme/leads-agent, tag: v1.2.0}
ai: {provider: ollama, endpoint: "http://ollama.ai.svc:11434", model: "llama3.2:3b"}
eventing:
  broker: {name: leads}
  forwards:
  - name: handoff
    eventTypes: [com.example.lead.qualified]
    target: {agent: triage, namespace: support}
`

// TestForwardAcrossNamespacesComposed checks that Direct mode requires the
// target agent of a forward in its own namespace, refuses the forward,
// stalling the composite while its Service runs, until that agent accepts
// the composite's namespace, and then requires its Broker there and
// composes the forward's Trigger.
func TestForwardAcrossNamespacesComposed(t *testing.T) {
	var spec v1alpha1.LambdaAgentParameters
	if err := yaml.UnmarshalStrict([]byte(leadsSpec), &spec); err != nil {
		t.Fatal(err)
	}
	const (
		leadsAddr  = "http://broker-ingress.knative-eventing.svc/apps/leads"
		triageAddr = "http://broker-ingress.knative-eventing.svc/support/triage"
	)
	objs, err := render.Agent(render.AgentInput{Namespace: testNS, Name: "leads", Spec: spec, Observed: render.Observed{ForwardAddresses: map[string]string{
		"broker/leads": leadsAddr, "agent/support/triage": triageAddr,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	triage := func(acceptFrom string) *fnv1.Resources {
		return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"platform.lambda.crossplane.io/v1alpha1","kind":"Agent","metadata":{"name":"triage","namespace":"support"},"spec":{"eventing":{"broker":{"name":"triage"},"acceptFrom":`+acceptFrom+`}}}`)}}}
	}
	leadsBroker := brokerAt(t, testNS, "leads", leadsAddr)
	triageBroker := brokerAt(t, "support", "triage", triageAddr)
	asked := map[string]*fnv1.ResourceSelector{
		"broker-leads":                 selectName("eventing.knative.dev/v1", "Broker", testNS, "leads"),
		"forward-agent-support/triage": selectName("platform.lambda.crossplane.io/v1alpha1", "Agent", "support", "triage"),
	}
	refused := fmt.Sprintf("forward handoff: agent support/triage does not exist or does not accept events from namespace %s: its eventing.acceptFrom must name it", testNS)
	xr := agentXR(t, "leads", leadsSpec)
	runAgentPasses(t, xr, map[string]agentPass{
		"FirstAsk": {
			reason:       "Before Crossplane answers, the target agent is required in its own namespace.",
			composed:     composedOf(),
			requirements: asked,
			conditions:   progressingConditions("Waiting", msgWaitRequired),
		},
		"NotAccepted": {
			reason:       "A target agent that does not accept the composite's namespace refuses the forward: no Trigger, its Broker never asked for, the Service runs and the composite stalls.",
			required:     map[string]*fnv1.Resources{"broker-leads": leadsBroker, "forward-agent-support/triage": triage(`["marketing"]`)},
			composed:     composedOf(serviceRunning("leads", false, objs.Image)),
			requirements: asked,
			conditions:   stalledConditions(string(v1alpha1.ReasonForwardRefused), refused),
		},
		"Missing": {
			reason:       "A target agent that does not exist reads the same.",
			required:     map[string]*fnv1.Resources{"broker-leads": leadsBroker, "forward-agent-support/triage": {}},
			composed:     composedOf(serviceRunning("leads", false, objs.Image)),
			requirements: asked,
			conditions:   stalledConditions(string(v1alpha1.ReasonForwardRefused), refused),
		},
		"Accepted": {
			reason:   "Once the target accepts the namespace, its Broker is required in its namespace and the forward's Trigger composed.",
			required: map[string]*fnv1.Resources{"broker-leads": leadsBroker, "forward-agent-support/triage": triage(`["marketing","apps"]`), "broker-support/triage": triageBroker},
			composed: composedOf(append([]composedSummary{serviceRunning("leads", false, objs.Image)}, triggersOf(objs)...)...),
			requirements: map[string]*fnv1.ResourceSelector{
				"broker-leads":                 asked["broker-leads"],
				"forward-agent-support/triage": asked["forward-agent-support/triage"],
				"broker-support/triage":        selectName("eventing.knative.dev/v1", "Broker", "support", "triage"),
			},
			conditions: progressingConditions("Deploying", "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"),
		},
	})
}

// TestIntentsComposed checks that Direct mode composes an Agent's intent
// Triggers and its forward by intent, once Crossplane has supplied the
// Brokers they need.
func TestIntentsComposed(t *testing.T) {
	const routerSpec = `
image: {repository: ghcr.io/acme/router-agent, tag: v1.0.0}
ai: {provider: ollama, endpoint: "http://ollama.ai.svc:11434", model: "llama3.2:3b"}
eventing:
  broker: {name: router}
  intents: [refund-request]
  forwards:
  - name: holds
    intents: [legal-hold]
    target: {broker: humans}
`
	var spec v1alpha1.LambdaAgentParameters
	if err := yaml.UnmarshalStrict([]byte(routerSpec), &spec); err != nil {
		t.Fatal(err)
	}
	addr := func(name string) string { return "http://broker-ingress.knative-eventing.svc/apps/" + name }
	objs, err := render.Agent(render.AgentInput{Namespace: testNS, Name: "router", Spec: spec, Observed: render.Observed{ForwardAddresses: map[string]string{
		"broker/router": addr("router"), "broker/humans": addr("humans"),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Triggers) != 2 {
		t.Fatalf("render made %d Triggers, want the intent's and the forward's", len(objs.Triggers))
	}
	broker := func(name string) *fnv1.Resources { return brokerAt(t, testNS, name, addr(name)) }
	sel := func(name string) *fnv1.ResourceSelector {
		return selectName("eventing.knative.dev/v1", "Broker", testNS, name)
	}
	xr := agentXR(t, "router", routerSpec)
	runAgentPasses(t, xr, map[string]agentPass{
		"Routed": {
			reason:       "With both Brokers supplied, the intent's Trigger and the forward's are composed beside the Service.",
			required:     map[string]*fnv1.Resources{"broker-router": broker("router"), "broker-humans": broker("humans")},
			composed:     composedOf(append([]composedSummary{serviceRunning("router", false, objs.Image)}, triggersOf(objs)...)...),
			requirements: map[string]*fnv1.ResourceSelector{"broker-router": sel("router"), "broker-humans": sel("humans")},
			conditions:   progressingConditions("Deploying", "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"),
		},
	})
}
