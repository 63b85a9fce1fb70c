package node

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// cycleType is the type of the event the agents forward to each other.
const cycleType = "com.example.ticket.escalated"

// cycleHops is the limit the test sets: small, so the cycle's events stay
// few enough to count.
const cycleHops = 4

// cycleTries is how often the test sends the cycle's first event before it
// gives up on the Brokers' data plane.
const cycleTries = 5

// cycleQuiet is how long the sink must get nothing more for the cycle to
// be judged over: each pass through both Brokers took well under a second.
const cycleQuiet = 10 * time.Second

// An agentOf is an agent of the test: its namespace, name and eventing.
type agentOf struct {
	namespace, name string
	eventing        *v1alpha1.AgentEventing
}

// TestForwardCycleEnds plays two teams whose agents forward one event type
// to each other across namespaces, each with the other's consent, one of
// them by two forwards, so that each round doubles the event. Knative's
// Brokers drop their own loop counter before they deliver, so before the
// relay the event went round without end, twice as often each round. Each
// forward's relay now counts it, and no event goes past the limit: the
// second team's Broker gets the event twice after the first hop and four
// times after the third, and then nothing.
func TestForwardCycleEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	publishing.Lock()
	err := c.PublishRelay(ctx, binDir(t))
	publishing.Unlock()
	if err != nil {
		t.Fatalf("%v: run make relay", err)
	}
	sink := RecordingSink(t)
	a := testkit.Namespace(ctx, t, kube, "team-a-", "")
	b := testkit.Namespace(ctx, t, kube, "team-b-", "")
	forward := func(name, ns, agent string) v1alpha1.Forward {
		return v1alpha1.Forward{Name: v1alpha1.DNSLabel(name), EventTypes: []string{cycleType}, Target: v1alpha1.ForwardTarget{
			Agent: ptr.To(v1alpha1.DNSLabel(agent)), Namespace: ptr.To(v1alpha1.DNSLabel(ns)),
		}}
	}
	agents := []agentOf{
		{namespace: a, name: "left", eventing: &v1alpha1.AgentEventing{
			Broker: &v1alpha1.Broker{Name: "left", Create: true}, AcceptFrom: []v1alpha1.DNSLabel{v1alpha1.DNSLabel(b)},
			Forwards: []v1alpha1.Forward{forward("one", b, "right"), forward("two", b, "right")},
		}},
		{namespace: b, name: "right", eventing: &v1alpha1.AgentEventing{
			Broker: &v1alpha1.Broker{Name: "right", Create: true}, AcceptFrom: []v1alpha1.DNSLabel{v1alpha1.DNSLabel(a)},
			Forwards: []v1alpha1.Forward{forward("back", a, "left")},
		}},
	}
	ingress := map[string]string{}
	addresses := map[render.BrokerRef]string{}
	for _, ag := range agents {
		objs := renderAgent(t, ag, nil)
		if err := kube.Create(ctx, objs.Broker); err != nil {
			t.Fatal(err)
		}
		ingress[ag.namespace] = brokerReady(ctx, t, kube, objs.Broker)
		addresses[render.BrokerRef{Namespace: ag.namespace, Name: objs.Broker.Name}] = objs.Broker.Status.Address.URL.String()
	}
	// What the second team's Broker gets of the type: the cycle's events
	// after each odd hop.
	watch := &eventingv1.Trigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: b, Name: "watch"},
		Spec: eventingv1.TriggerSpec{
			Broker:     "right",
			Filter:     &eventingv1.TriggerFilter{Attributes: eventingv1.TriggerFilterAttributes{"type": cycleType}},
			Subscriber: duckv1.Destination{URI: sink.URL},
		},
	}
	toCreate := []client.Object{watch}
	for _, ag := range agents {
		objs := renderAgent(t, ag, forwardAddresses(t, ag, agents, addresses))
		if objs.Relay == nil || len(objs.Triggers) == 0 {
			t.Fatalf("agent %s/%s has no relay or forward Triggers: pending %q, refused %q", ag.namespace, ag.name, objs.Pending, objs.Refused)
		}
		toCreate = append(toCreate, objs.Relay)
		for _, tr := range objs.Triggers {
			toCreate = append(toCreate, tr)
		}
	}
	for _, o := range toCreate {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for _, o := range toCreate {
		if tr, ok := o.(*eventingv1.Trigger); ok {
			triggerReady(ctx, t, kube, tr)
		}
	}
	t.Logf("Knative made the relays and Triggers Ready in %s", time.Since(start).Round(time.Second))

	// Every hop's events reach the watch: the first team's two forwards
	// each send the event on, and so double it at each odd hop.
	want := map[string]int{"1": 2, "3": 4}
	var hops map[string]int
	var last time.Time
	for round := 1; ; round++ {
		var ticket string
		ticket, start = sendCycle(ctx, t, ingress[a], round)
		hops, last = cycle(ctx, t, sink, ticket)
		if cmp.Equal(want, hops) || round == cycleTries {
			break
		}
		// Accepted while a Trigger, the watch's or a forward's, was Ready
		// before the Broker's filter knew it: what it would have taken
		// went to no one. CI's node saw the whole cycle lost, and once
		// half of it (one forward of two).
		t.Logf("the second team's Broker got %v by hop count of accepted event %s: sending a new one", hops, ticket)
	}
	t.Logf("the cycle ended %s after the event was sent; the second team's Broker got %v by hop count", last.Sub(start).Round(time.Millisecond), hops)
	if diff := cmp.Diff(want, hops); diff != "" {
		t.Errorf("what the second team's Broker got by hop count after %d accepted events: -want, +got:\n%s", cycleTries, diff)
	}
}

// cycle counts what the sink gets of the cycle of ticket, by hop count,
// until it has got nothing for cycleQuiet, and says when it last got one.
func cycle(ctx context.Context, t *testing.T, sink *Sink, ticket string) (map[string]int, time.Time) {
	t.Helper()
	hops, last := map[string]int{}, time.Now()
	for end := time.After(cycleQuiet); end != nil; {
		select {
		case r := <-sink.Got:
			if r.Body != ticket {
				continue // What a try before sent on.
			}
			hops[r.Hops]++
			last = time.Now()
			end = time.After(cycleQuiet)
		case <-end:
			end = nil
		case <-ctx.Done():
			t.Fatalf("the cycle never ended: the second team's Broker got %v by hop count", hops)
		}
	}
	return hops, last
}

// sendCycle posts the cycle's first event of a round to the first team's
// Broker until it is accepted, and returns the accepted event's data and
// when it was sent. The in-memory channels deliver at once and answer after their
// subscribers, so the ingress answers after the whole cycle, and with 500 if
// any hop failed: on a busy node a hop's Trigger may be Ready before the
// Broker's filter knows it. A refused try may have gone part of the way, so
// each try carries its own ticket and only the accepted one's events count.
func sendCycle(ctx context.Context, t *testing.T, ingress string, round int) (string, time.Time) {
	t.Helper()
	for try := 1; ; try++ {
		ticket, sent := fmt.Sprintf(`{"ticket": "%d.%d"}`, round, try), time.Now()
		status, body, err := postEvent(ctx, ingress, "", cycleType, ticket)
		if err == nil && status == http.StatusAccepted {
			return ticket, sent
		}
		if try == cycleTries {
			t.Fatalf("the first team's Broker answered %d %q (%v) after %s, %d times; want 202", status, body, err, time.Since(sent).Round(time.Millisecond), try)
		}
		t.Logf("the first team's Broker answered %d %q (%v) after %s: sending a new event", status, body, err, time.Since(sent).Round(time.Millisecond))
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// renderAgent renders an agent of the test, with the relay published here
// and the test's limit.
func renderAgent(t *testing.T, ag agentOf, addresses map[string]string) *render.Objects {
	t.Helper()
	objs, err := render.Agent(render.AgentInput{
		Namespace: ag.namespace, Name: ag.name,
		Spec: v1alpha1.LambdaAgentParameters{
			Image:    v1alpha1.AgentImage{Repository: "registry.local/agents/never-run", Tag: ptr.To[v1alpha1.ImageTag]("v1")},
			AI:       v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Model: "none"},
			Eventing: ag.eventing,
		},
		Defaults: render.Defaults{RelayImage: RelayImage, MaxForwardHops: cycleHops},
		Observed: render.Observed{ForwardAddresses: addresses},
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// forwardAddresses resolves an agent's forward targets among the test's
// agents as the provider does, to the addresses their Brokers report.
func forwardAddresses(t *testing.T, ag agentOf, agents []agentOf, addresses map[render.BrokerRef]string) map[string]string {
	t.Helper()
	targets, err := render.BrokerTargets(ag.namespace, ag.name, ag.eventing, func(namespace, name string) (*v1alpha1.AgentEventing, bool, error) {
		i := slices.IndexFunc(agents, func(o agentOf) bool { return o.namespace == namespace && o.name == name })
		if i < 0 {
			return nil, false, nil
		}
		return agents[i].eventing, true, nil
	})
	if err != nil || len(targets.Refused) > 0 {
		t.Fatalf("the forwards of %s/%s are refused (%v): %v", ag.namespace, ag.name, err, targets.Refused)
	}
	out := map[string]string{}
	for key, ref := range targets.Brokers {
		addr, ok := addresses[ref]
		if !ok {
			t.Fatalf("no address for %s of %s/%s among %v", fmt.Sprint(ref), ag.namespace, ag.name, slices.Collect(maps.Keys(addresses)))
		}
		out[key] = addr
	}
	return out
}
