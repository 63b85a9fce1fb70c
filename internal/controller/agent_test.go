package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

func newAgent(ns, name string, pc xpv2.ProviderConfigReference, eventing *v1alpha1.AgentEventing) *v1alpha1.LambdaAgent {
	a := testkit.Agent(ns, name, pc)
	a.Spec.ForProvider.Eventing = eventing
	return a
}

// setBrokerAddress plays Knative Eventing: the Broker, which the scene's
// player leaves to the test, is Ready at its address.
func setBrokerAddress(ctx context.Context, t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	b := &eventingv1.Broker{}
	wait.Until(ctx, t, "Broker "+name+" exists", func() string {
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b))
	})
	b.SetGroupVersionKind(eventingv1.SchemeGroupVersion.WithKind("Broker"))
	playact.MarkEventingReady(ctx, t, c, b)
	return b.Status.Address.URL.String()
}

// TestAgentForwards checks that an agent's forward waits for the target
// agent's Broker to report an address, then delivers there, and that the
// agent is Ready only then.
func TestAgentForwards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "agents", keep)
	// The test says when each Broker has its address.
	p.eventing.Leave("supervisor")
	p.eventing.Leave("support")
	pc := xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}
	supervisor := newAgent(ns, "supervisor", pc, &v1alpha1.AgentEventing{Broker: &v1alpha1.Broker{Name: "supervisor", Create: true}})
	support := newAgent(ns, "support", pc, &v1alpha1.AgentEventing{
		Broker:        &v1alpha1.Broker{Name: "support", Create: true},
		Subscriptions: []v1alpha1.Subscription{{Name: "tickets", EventType: "com.example.ticket.opened"}},
		Forwards:      []v1alpha1.Forward{{Name: "escalations", EventTypes: []string{"com.example.ticket.escalated"}, Target: v1alpha1.ForwardTarget{Agent: ptr(v1alpha1.DNSLabel("supervisor"))}}},
	})
	support.Spec.ForProvider.Image.ReadinessPath = ptr(v1alpha1.HTTPPath("/healthz"))
	support.Spec.ForProvider.TimeoutSeconds = ptr(int64(240))
	for _, a := range []*v1alpha1.LambdaAgent{supervisor, support} {
		if err := c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the agent's Service and subscription Trigger exist", func() string {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support"}, svc); err != nil {
			return err.Error()
		}
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: render.TriggerName(v1alpha1.LambdaAgentKind, "support", "tickets", "subscription/tickets")}, &eventingv1.Trigger{}))
	})
	if svc.Spec.Template.Annotations["autoscaling.knative.dev/min-scale"] != "1" {
		t.Errorf("an agent is not kept warm: min-scale %q", svc.Spec.Template.Annotations["autoscaling.knative.dev/min-scale"])
	}
	if p := svc.Spec.Template.Spec.Containers[0].ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("the agent's readiness path is not probed: %+v", p)
	}
	if to := svc.Spec.Template.Spec.TimeoutSeconds; to == nil || *to != 240 {
		t.Errorf("the agent's request timeout: want 240 s, got %v", to)
	}
	playact.MarkServiceReady(ctx, t, c, svc)
	setBrokerAddress(ctx, t, c, ns, "support")
	waitCondition(ctx, t, c, support, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonWaiting, "forward escalations")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: render.TriggerName(v1alpha1.LambdaAgentKind, "support", "escalations-0", "forward/escalations/0")}, &eventingv1.Trigger{}); err == nil {
		t.Error("a forward Trigger exists before its Broker has an address")
	}

	addr := setBrokerAddress(ctx, t, c, ns, "supervisor")
	relay := waitForwarded(ctx, t, c, ns, "support", render.TriggerName(v1alpha1.LambdaAgentKind, "support", "escalations-0", "forward/escalations/0"), addr)
	waitCondition(ctx, t, c, support, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonDeploying, "Service "+relay.Name)
	playact.MarkServiceReady(ctx, t, c, relay)
	waitCondition(ctx, t, c, support, xpv2.TypeReady, corev1.ConditionTrue, "", "")
}

// TestRemoteTarget checks that a ProviderConfig with a kubeconfig Secret
// sends a resource's objects to that cluster: a second, real API server.
func TestRemoteTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := startRemote(ctx, t)
	rc := r.kube
	p := startProvider(t, providerOptions{allowTargets: loopbackNet})
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "remote-", "")
	agent := newAgent(ns, "edge-agent", r.target(ctx, t, c, ns, "edge"), nil)
	if err := c.Create(ctx, agent); err != nil {
		t.Fatal(err)
	}
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the agent's Service exists in the remote cluster", func() string {
		return wait.ErrString(rc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge-agent"}, svc))
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge-agent"}, &servingv1.Service{}); err == nil {
		t.Error("the agent's Service was also created in the provider's own cluster")
	}
	playact.MarkServiceReady(ctx, t, rc, svc)
	wait.Until(ctx, t, "the agent is Ready from the remote Service's status", func() string {
		mg := &v1alpha1.LambdaAgent{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(agent), mg); err != nil {
			return err.Error()
		}
		if r := mg.GetCondition(xpv2.TypeReady); r.Status != corev1.ConditionTrue || mg.Status.AtProvider.URL == "" {
			return fmt.Sprintf("Ready %s %s %q, url %q", r.Status, r.Reason, r.Message, mg.Status.AtProvider.URL)
		}
		return ""
	})
}

// TestForwardAcrossNamespaces checks, against a real API server with
// Knative played, that a forward to an agent of another namespace is
// refused until that agent accepts the namespace, then delivers to its
// Broker's address in its namespace, and that its Trigger goes as soon as
// the consent is withdrawn, while the forwarding agent's own Service and
// Triggers run throughout.
func TestForwardAcrossNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, sales := newScene(ctx, t, "sales", keep)
	support := testkit.Namespace(ctx, t, c, "support-", "")
	newProviderConfig(ctx, t, c, support)
	playEventing(ctx, c, support)
	pc := xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}
	triage := newAgent(support, "triage", pc, &v1alpha1.AgentEventing{Broker: &v1alpha1.Broker{Name: "triage", Create: true}})
	leads := newAgent(sales, "leads", pc, &v1alpha1.AgentEventing{
		Broker:        &v1alpha1.Broker{Name: "leads", Create: true},
		Subscriptions: []v1alpha1.Subscription{{Name: "inbound", EventType: "com.example.lead"}},
		Forwards: []v1alpha1.Forward{{Name: "handoff", EventTypes: []string{"com.example.lead.qualified"},
			Target: v1alpha1.ForwardTarget{Agent: ptr(v1alpha1.DNSLabel("triage")), Namespace: ptr(v1alpha1.DNSLabel(support))}}},
	})
	for _, a := range []*v1alpha1.LambdaAgent{triage, leads} {
		if err := c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	serveAgents(ctx, t, c, triage, leads)
	handoff := client.ObjectKey{Namespace: sales, Name: render.TriggerName(v1alpha1.LambdaAgentKind, "leads", "handoff-0", "forward/handoff/0")}
	refused := fmt.Sprintf("forward handoff: agent %s/triage does not exist or does not accept events from namespace %s", support, sales)

	waitCondition(ctx, t, c, leads, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonForwardRefused, refused)
	if err := c.Get(ctx, handoff, &eventingv1.Trigger{}); !kerrors.IsNotFound(err) {
		t.Errorf("a refused forward has a Trigger: %v", err)
	}
	inbound := client.ObjectKey{Namespace: sales, Name: render.TriggerName(v1alpha1.LambdaAgentKind, "leads", "inbound", "subscription/inbound")}
	if err := c.Get(ctx, inbound, &eventingv1.Trigger{}); err != nil {
		t.Errorf("a refused forward held back the agent's subscription: %v", err)
	}

	update(ctx, t, c, client.ObjectKeyFromObject(triage), func(a *v1alpha1.LambdaAgent) {
		a.Spec.ForProvider.Eventing.AcceptFrom = []v1alpha1.DNSLabel{v1alpha1.DNSLabel(sales)}
	})
	addr := brokerAddress(ctx, t, c, support, "triage")
	playact.MarkServiceReady(ctx, t, c, waitForwarded(ctx, t, c, sales, "leads", handoff.Name, addr))
	waitCondition(ctx, t, c, leads, xpv2.TypeReady, corev1.ConditionTrue, "", "")

	update(ctx, t, c, client.ObjectKeyFromObject(triage), func(a *v1alpha1.LambdaAgent) {
		a.Spec.ForProvider.Eventing.AcceptFrom = nil
	})
	wait.Until(ctx, t, "the withdrawn forward's Trigger is gone", func() string {
		if err := c.Get(ctx, handoff, &eventingv1.Trigger{}); !kerrors.IsNotFound(err) {
			return fmt.Sprintf("Get: %v", err)
		}
		return ""
	})
	waitCondition(ctx, t, c, leads, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonForwardRefused, refused)
	if err := c.Get(ctx, inbound, &eventingv1.Trigger{}); err != nil {
		t.Errorf("withdrawing consent removed the agent's subscription: %v", err)
	}
}

// TestIntentRouting checks, against a real API server with Knative played,
// that an agent's intents and a forward by intent become Triggers on the
// intent extension attribute, one delivering to the agent's Service and one
// to the target agent's Broker address through its relay, and that the
// agent is Ready.
func TestIntentRouting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "intents", keep)
	pc := xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}
	legal := newAgent(ns, "legal", pc, &v1alpha1.AgentEventing{Broker: &v1alpha1.Broker{Name: "legal", Create: true}})
	router := newAgent(ns, "router", pc, &v1alpha1.AgentEventing{
		Broker:   &v1alpha1.Broker{Name: "router", Create: true},
		Intents:  []v1alpha1.Intent{"refund-request"},
		Forwards: []v1alpha1.Forward{{Name: "holds", Intents: []v1alpha1.Intent{"legal-hold"}, Target: v1alpha1.ForwardTarget{Agent: ptr(v1alpha1.DNSLabel("legal"))}}},
	})
	for _, a := range []*v1alpha1.LambdaAgent{legal, router} {
		if err := c.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	serveAgents(ctx, t, c, legal, router)
	legalAddr := brokerAddress(ctx, t, c, ns, "legal")
	holds := render.TriggerName(v1alpha1.LambdaAgentKind, "router", "holds-0", "forward/holds/intent/legal-hold")
	playact.MarkServiceReady(ctx, t, c, waitForwarded(ctx, t, c, ns, "router", holds, legalAddr))
	for _, want := range []struct {
		name, key, intent, sink string
	}{
		{name: "intent-refund-request", key: "intent/refund-request", intent: "refund-request", sink: "Service/router"},
		{name: "holds-0", key: "forward/holds/intent/legal-hold", intent: "legal-hold", sink: "Service/" + render.RelayName("router")},
	} {
		key := client.ObjectKey{Namespace: ns, Name: render.TriggerName(v1alpha1.LambdaAgentKind, "router", want.name, want.key)}
		wait.Until(ctx, t, "the "+want.intent+" Trigger delivers to "+want.sink, func() string {
			tr := &eventingv1.Trigger{}
			if err := c.Get(ctx, key, tr); err != nil {
				return err.Error()
			}
			sink := ""
			if s := tr.Spec.Subscriber; s.Ref != nil {
				sink = s.Ref.Kind + "/" + s.Ref.Name
			} else if s.URI != nil {
				sink = s.URI.String()
			}
			if tr.Spec.Filter == nil || tr.Spec.Filter.Attributes["intent"] != want.intent || len(tr.Spec.Filter.Attributes) != 1 || sink != want.sink {
				return fmt.Sprintf("filter %+v, subscriber %s", tr.Spec.Filter, sink)
			}
			return ""
		})
	}
	waitCondition(ctx, t, c, router, xpv2.TypeReady, corev1.ConditionTrue, "", "")
}

// serveAgents plays Knative Serving rolling out each agent's Service once
// the provider has applied it.
func serveAgents(ctx context.Context, t *testing.T, c client.Client, agents ...*v1alpha1.LambdaAgent) {
	t.Helper()
	for _, a := range agents {
		playact.MarkServiceReady(ctx, t, c, serviceWhen(ctx, t, c, client.ObjectKeyFromObject(a), a.Name+"'s Service exists", anyService))
	}
}

// brokerAddress waits until a Broker reports its address, as the scene's
// Eventing player makes it, and returns it.
func brokerAddress(ctx context.Context, t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	b := &eventingv1.Broker{}
	wait.Until(ctx, t, "Broker "+name+" has its address", func() string {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			return err.Error()
		}
		if observe.BrokerAddress(b) == "" {
			return "no address"
		}
		return ""
	})
	return observe.BrokerAddress(b)
}

// waitForwarded waits until the forward Trigger of agent delivers to
// addr through the agent's relay, and returns the relay.
func waitForwarded(ctx context.Context, t *testing.T, c client.Client, ns, agent, trigger, addr string) *servingv1.Service {
	t.Helper()
	relay := &servingv1.Service{}
	wait.Until(ctx, t, "the forward delivers to "+addr+" through the relay", func() string {
		tr := &eventingv1.Trigger{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: trigger}, tr); err != nil {
			return err.Error()
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: render.RelayName(agent)}, relay); err != nil {
			return err.Error()
		}
		if got := testkit.ForwardedTo(relay, tr); got != addr {
			return fmt.Sprintf("delivers to %q: subscriber %+v", got, tr.Spec.Subscriber)
		}
		return ""
	})
	return relay
}
