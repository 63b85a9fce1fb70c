package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

func TestAgentReadinessAndTimeout(t *testing.T) {
	cases := map[string]struct {
		reason      string
		path        *v1alpha1.HTTPPath
		timeout     *int64
		wantProbe   corev1.ProbeHandler
		wantTimeout *int64
	}{
		"Defaults": {
			reason:    "An agent image render did not write is ready when its port accepts connections, and Knative's timeout applies.",
			wantProbe: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9000)}},
		},
		"PathAndTimeout": {
			reason:      "An agent that says where it answers once its model is loaded is probed there, on its own port, and its requests may take as long as it says.",
			path:        ptr.To[v1alpha1.HTTPPath]("/healthz"),
			timeout:     ptr.To[int64](240),
			wantProbe:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(9000)}},
			wantTimeout: ptr.To[int64](240),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Agent(AgentInput{Namespace: "apps", Name: "helper", Spec: v1alpha1.LambdaAgentParameters{
				Image:          v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To[v1alpha1.ImageTag]("v1"), Port: 9000, ReadinessPath: tc.path},
				AI:             v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"},
				TimeoutSeconds: tc.timeout,
			}})
			if err != nil {
				t.Fatal(err)
			}
			spec := out.Service.Spec.Template.Spec
			if diff := cmp.Diff(tc.wantProbe, spec.Containers[0].ReadinessProbe.ProbeHandler); diff != "" {
				t.Errorf("%s\nreadiness probe: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantTimeout, spec.TimeoutSeconds); diff != "" {
				t.Errorf("%s\ntimeoutSeconds: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestForwardConsent checks which Brokers an agent in namespace sales may
// forward to: its own namespace's without asking, another namespace's only
// when the target agent accepts sales, and a refusal that reads the same
// whether the target refuses or does not exist.
func TestForwardConsent(t *testing.T) {
	agents := map[string]*v1alpha1.AgentEventing{
		"sales/pricing":    {Broker: &v1alpha1.Broker{Name: "pricing"}},
		"support/triage":   {Broker: &v1alpha1.Broker{Name: "triage"}, AcceptFrom: []v1alpha1.DNSLabel{"marketing", "sales"}},
		"support/billing":  {AcceptFrom: []v1alpha1.DNSLabel{"marketing"}},
		"support/escalate": nil,
	}
	lookup := func(namespace, name string) (*v1alpha1.AgentEventing, bool, error) {
		e, ok := agents[namespace+"/"+name]
		return e, ok, nil
	}
	forward := func(name, ns, agent string) v1alpha1.Forward {
		f := v1alpha1.Forward{Name: v1alpha1.DNSLabel(name), EventTypes: []string{"com.example.lead"}, Target: v1alpha1.ForwardTarget{Agent: ptr.To(v1alpha1.DNSLabel(agent))}}
		if ns != "" {
			f.Target.Namespace = ptr.To(v1alpha1.DNSLabel(ns))
		}
		return f
	}
	own := BrokerRef{Namespace: "sales", Name: "default"}
	cases := map[string]struct {
		reason  string
		forward v1alpha1.Forward
		want    ForwardTargets
	}{
		"SameNamespace": {
			reason:  "An agent of the same namespace needs no consent.",
			forward: forward("quotes", "", "pricing"),
			want:    ForwardTargets{Brokers: map[string]BrokerRef{"broker/default": own, "agent/pricing": {Namespace: "sales", Name: "pricing"}}},
		},
		"SameNamespaceNamed": {
			reason:  "Naming the agent's own namespace changes nothing.",
			forward: forward("quotes", "sales", "pricing"),
			want:    ForwardTargets{Brokers: map[string]BrokerRef{"broker/default": own, "agent/sales/pricing": {Namespace: "sales", Name: "pricing"}}},
		},
		"Accepted": {
			reason:  "An agent of another namespace that accepts sales gets its Broker in its namespace.",
			forward: forward("leads", "support", "triage"),
			want:    ForwardTargets{Brokers: map[string]BrokerRef{"broker/default": own, "agent/support/triage": {Namespace: "support", Name: "triage"}}},
		},
		"NotAccepted": {
			reason:  "An agent that accepts other namespaces but not sales refuses.",
			forward: forward("leads", "support", "billing"),
			want: ForwardTargets{
				Brokers: map[string]BrokerRef{"broker/default": own},
				Refused: map[string]string{"agent/support/billing": "agent support/billing does not exist or does not accept events from namespace sales: its eventing.acceptFrom must name it"},
			},
		},
		"NoEventing": {
			reason:  "An agent that says nothing of eventing accepts no other namespace.",
			forward: forward("leads", "support", "escalate"),
			want: ForwardTargets{
				Brokers: map[string]BrokerRef{"broker/default": own},
				Refused: map[string]string{"agent/support/escalate": "agent support/escalate does not exist or does not accept events from namespace sales: its eventing.acceptFrom must name it"},
			},
		},
		"Missing": {
			reason:  "A missing agent of another namespace reads as a refusal, so a forward cannot probe what another namespace holds.",
			forward: forward("leads", "support", "ghost"),
			want: ForwardTargets{
				Brokers: map[string]BrokerRef{"broker/default": own},
				Refused: map[string]string{"agent/support/ghost": "agent support/ghost does not exist or does not accept events from namespace sales: its eventing.acceptFrom must name it"},
			},
		},
		"MissingSameNamespace": {
			reason:  "A missing agent of the same namespace is waited for, as before.",
			forward: forward("quotes", "", "pricing-v2"),
			want:    ForwardTargets{Brokers: map[string]BrokerRef{"broker/default": own}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := BrokerTargets("sales", "leads", &v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{tc.forward}}, lookup)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nBrokerTargets(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRefusedForward checks that a refused forward renders no Trigger and
// says why, while the agent's other Triggers render.
// leads renders an agent of namespace sales with a subscription and a
// forward to agent support/triage (forwardToTriage), given what o says was
// observed.
func leads(o Observed) (*Objects, error) {
	return Agent(AgentInput{Namespace: "sales", Name: "leads", Observed: o, Spec: v1alpha1.LambdaAgentParameters{
		Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To[v1alpha1.ImageTag]("v1")},
		AI:    v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"},
		Eventing: &v1alpha1.AgentEventing{
			Subscriptions: []v1alpha1.Subscription{{Name: "inbound", EventType: "com.example.lead"}},
			Forwards: []v1alpha1.Forward{{Name: "handoff", EventTypes: []string{"com.example.lead.qualified"},
				Target: v1alpha1.ForwardTarget{Agent: ptr.To[v1alpha1.DNSLabel]("triage"), Namespace: ptr.To[v1alpha1.DNSLabel]("support")}}},
		},
	}})
}

// forwardToTriage is the key of leads' forward target, and its address.
const (
	forwardToTriage        = "agent/support/triage"
	forwardToTriageAddress = "http://broker-ingress.knative-eventing.svc.cluster.local/support/triage"
)

func TestRefusedForward(t *testing.T) {
	out, err := leads(Observed{
		ForwardAddresses: map[string]string{forwardToTriage: forwardToTriageAddress},
		Refused:          map[string]string{forwardToTriage: "agent support/triage does not accept"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range out.Triggers {
		names = append(names, tr.Name)
	}
	if want := []string{TriggerName(v1alpha1.LambdaAgentKind, "leads", "inbound", "subscription/inbound")}; !cmp.Equal(want, names) {
		t.Errorf("Triggers %v, want only the subscription's %v", names, want)
	}
	if want := []string{"forward handoff: agent support/triage does not accept"}; !cmp.Equal(want, out.Refused) {
		t.Errorf("Refused %q, want %q", out.Refused, want)
	}
}

// TestIntents checks intent routing: an agent's intents each get a Trigger
// on the intent extension attribute, delivering to the agent; a forward
// selects by type, by intent, or by both, with one Trigger per type, intent
// or pair, so no event is forwarded twice.
func TestIntents(t *testing.T) {
	type got struct {
		Name    string
		Filters map[string]string
		Sink    string
	}
	const addr = "http://broker-ingress.knative-eventing.svc.cluster.local/apps/humans"
	forward := func(types []string, intents ...v1alpha1.Intent) v1alpha1.Forward {
		return v1alpha1.Forward{Name: "legal", EventTypes: types, Intents: intents, Target: v1alpha1.ForwardTarget{Broker: ptr.To[v1alpha1.DNSLabel]("humans")}}
	}
	name := func(trigger, key string) string { return TriggerName(v1alpha1.LambdaAgentKind, "triage", trigger, key) }
	cases := map[string]struct {
		reason   string
		eventing v1alpha1.AgentEventing
		want     []got
	}{
		"Handles": {
			reason:   "Each intent the agent handles is a Trigger on the intent attribute alone, delivering to the agent's Service.",
			eventing: v1alpha1.AgentEventing{Intents: []v1alpha1.Intent{"refund-request", "legal-hold"}},
			want: []got{
				{Name: name("intent-refund-request", "intent/refund-request"), Filters: map[string]string{"intent": "refund-request"}, Sink: "Service/triage"},
				{Name: name("intent-legal-hold", "intent/legal-hold"), Filters: map[string]string{"intent": "legal-hold"}, Sink: "Service/triage"},
			},
		},
		"ForwardByType": {
			reason:   "A forward by type alone keeps the Trigger names it has always had.",
			eventing: v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{forward([]string{"com.example.subpoena"})}},
			want:     []got{{Name: name("legal-0", "forward/legal/0"), Filters: map[string]string{"type": "com.example.subpoena"}, Sink: addr}},
		},
		"ForwardByIntent": {
			reason:   "A forward by intent has a Trigger per intent, whatever the type.",
			eventing: v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{forward(nil, "legal-hold", "gdpr-erasure")}},
			want: []got{
				{Name: name("legal-0", "forward/legal/intent/legal-hold"), Filters: map[string]string{"intent": "legal-hold"}, Sink: addr},
				{Name: name("legal-1", "forward/legal/intent/gdpr-erasure"), Filters: map[string]string{"intent": "gdpr-erasure"}, Sink: addr},
			},
		},
		"ForwardByBoth": {
			reason:   "A forward by type and intent matches both: a Trigger per pair.",
			eventing: v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{forward([]string{"com.example.ticket", "com.example.mail"}, "legal-hold")}},
			want: []got{
				{Name: name("legal-0", "forward/legal/type/com.example.ticket/intent/legal-hold"), Filters: map[string]string{"type": "com.example.ticket", "intent": "legal-hold"}, Sink: addr},
				{Name: name("legal-1", "forward/legal/type/com.example.mail/intent/legal-hold"), Filters: map[string]string{"type": "com.example.mail", "intent": "legal-hold"}, Sink: addr},
			},
		},
	}
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			out, err := Agent(AgentInput{Namespace: "apps", Name: "triage", Spec: v1alpha1.LambdaAgentParameters{
				Image:    v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To[v1alpha1.ImageTag]("v1")},
				AI:       v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"},
				Eventing: &tc.eventing,
			}, Observed: Observed{ForwardAddresses: map[string]string{"broker/humans": addr}}})
			if err != nil {
				t.Fatal(err)
			}
			var triggers []got
			for _, tr := range out.Triggers {
				g := got{Name: tr.Name, Filters: map[string]string(tr.Spec.Filter.Attributes)}
				g.Sink = testkit.ForwardedTo(out.Relay, tr)
				if s := tr.Spec.Subscriber; g.Sink == "" && s.Ref != nil {
					g.Sink = s.Ref.Kind + "/" + s.Ref.Name
				}
				triggers = append(triggers, g)
			}
			if diff := cmp.Diff(tc.want, triggers); diff != "" {
				t.Errorf("%s\nTriggers: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestForwardLoops checks that an agent of namespace sales, named leads and
// listening on Broker default, may not forward events back into its own
// Broker. Before, the API server admitted it and render made a Trigger that
// sent every matching event back to where it came from: with two such
// forwards one event became 2, 4, 8, ... deliveries through the broker every
// namespace shares.
func TestForwardLoops(t *testing.T) {
	toAgent := func(name string, types ...string) v1alpha1.Forward {
		return v1alpha1.Forward{Name: v1alpha1.DNSLabel("to-" + name), EventTypes: types, Target: v1alpha1.ForwardTarget{Agent: ptr.To(v1alpha1.DNSLabel(name))}}
	}
	agents := map[string]*v1alpha1.AgentEventing{
		// An agent on the same Broker as leads.
		"sales/twin": {},
		// Pricing forwards lead events back to leads by name, quotes to
		// default by Broker, and intents to leads.
		"sales/pricing": {Broker: &v1alpha1.Broker{Name: "pricing"}, Forwards: []v1alpha1.Forward{
			toAgent("leads", "com.example.lead"),
			{Name: "quotes", EventTypes: []string{"com.example.quote"}, Target: v1alpha1.ForwardTarget{Broker: ptr.To(v1alpha1.DNSLabel("default"))}},
		}},
	}
	lookup := func(namespace, name string) (*v1alpha1.AgentEventing, bool, error) {
		e, ok := agents[namespace+"/"+name]
		return e, ok, nil
	}
	cases := map[string]struct {
		reason  string
		forward v1alpha1.Forward
		refused string
	}{
		"OwnBrokerByName": {
			reason:  "A forward into the Broker the agent listens on, named.",
			forward: v1alpha1.Forward{Name: "again", EventTypes: []string{"com.example.lead"}, Target: v1alpha1.ForwardTarget{Broker: ptr.To(v1alpha1.DNSLabel("default"))}},
			refused: "forward again sends events into Broker default, which the agent listens on",
		},
		"Itself": {
			reason:  "A forward to the agent itself.",
			forward: toAgent("leads", "com.example.lead"),
			refused: "forward to-leads sends events into Broker default, which the agent listens on",
		},
		"Twin": {
			reason:  "A forward to another agent on the same Broker.",
			forward: toAgent("twin", "com.example.lead"),
			refused: "forward to-twin sends events into Broker default, which the agent listens on",
		},
		"PingPong": {
			reason:  "A forward to an agent that forwards the same events back by name.",
			forward: toAgent("pricing", "com.example.lead"),
			refused: "forward to-pricing sends events to agent pricing, whose forward to-leads sends the same events back into Broker default",
		},
		"PingPongByBroker": {
			reason:  "A forward to an agent that forwards the same events back by Broker.",
			forward: toAgent("pricing", "com.example.quote"),
			refused: "whose forward quotes sends the same events back into Broker default",
		},
		"NoOverlap": {
			reason:  "The control: what pricing sends back is not what leads forwards to it.",
			forward: toAgent("pricing", "com.example.order"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := BrokerTargets("sales", "leads", &v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{tc.forward}}, lookup)
			if err != nil {
				t.Fatal(err)
			}
			key := ForwardTargetKey(tc.forward.Target)
			why := got.Refused[key]
			if tc.refused == "" {
				if why != "" {
					t.Errorf("%s\nrefused: %s", tc.reason, why)
				}
				return
			}
			if !strings.Contains(why, tc.refused) {
				t.Errorf("%s\nrefused: %q; want %q", tc.reason, why, tc.refused)
			}
			if _, ok := got.Brokers[key]; ok && key != "broker/default" {
				t.Errorf("%s\nthe forward still has a Broker to send to", tc.reason)
			}
		})
	}
}
