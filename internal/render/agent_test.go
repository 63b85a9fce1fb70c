package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
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
			got, err := BrokerTargets("sales", &v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{tc.forward}}, lookup)
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
func TestRefusedForward(t *testing.T) {
	key := "agent/support/triage"
	out, err := Agent(AgentInput{Namespace: "sales", Name: "leads", Spec: v1alpha1.LambdaAgentParameters{
		Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To[v1alpha1.ImageTag]("v1")},
		AI:    v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"},
		Eventing: &v1alpha1.AgentEventing{
			Subscriptions: []v1alpha1.Subscription{{Name: "inbound", EventType: "com.example.lead"}},
			Forwards: []v1alpha1.Forward{{Name: "handoff", EventTypes: []string{"com.example.lead.qualified"},
				Target: v1alpha1.ForwardTarget{Agent: ptr.To[v1alpha1.DNSLabel]("triage"), Namespace: ptr.To[v1alpha1.DNSLabel]("support")}}},
		},
	}, Observed: Observed{
		ForwardAddresses: map[string]string{key: "http://broker-ingress.knative-eventing.svc.cluster.local/support/triage"},
		Refused:          map[string]string{key: "agent support/triage does not accept"},
	}})
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
