package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	eventingduckv1 "knative.dev/eventing/pkg/apis/duck/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestPlayedTriggerAsReal holds playact to real Knative Eventing: a Trigger
// that delivers, ones whose dead-letter sink or subscriber is a Service that
// does not exist, and one of a Broker that is not Ready are reported on the
// real node with conditions that playact writes alike, and a Ready Broker
// is read as playact plays it. The provider's and the function's tests
// that play Triggers on the API server alone stand on this. A Trigger of a
// Broker that does not exist is reported on by no one
// (TestTriggerOfNoBroker).
func TestPlayedTriggerAsReal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kube := targetClient(t)
	ns := testkit.Namespace(ctx, t, kube, "triggers-", "")
	broker := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}}
	if err := kube.Create(ctx, broker); err != nil {
		t.Fatal(err)
	}
	brokerReady(ctx, t, kube, broker)
	played := broker.DeepCopy()
	if err := playact.SettleBroker(played); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(brokerRead(broker), brokerRead(played)); diff != "" {
		t.Errorf("A Ready Broker is read as playact plays it: -real, +played:\n%s", diff)
	}
	sink := RecordingSink(t)
	// A Broker whose own dead-letter sink does not exist is never Ready:
	// its Triggers carry its condition.
	stalled := &eventingv1.Broker{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stalled"},
		Spec:       eventingv1.BrokerSpec{Delivery: &eventingduckv1.DeliverySpec{DeadLetterSink: &duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "dlq"}}}},
	}
	if err := kube.Create(ctx, stalled); err != nil {
		t.Fatal(err)
	}
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		err := kube.Get(ctx, client.ObjectKeyFromObject(stalled), stalled)
		ready := stalled.Status.GetCondition(apis.ConditionReady)
		return err == nil && stalled.Status.ObservedGeneration == stalled.Generation && ready != nil && !ready.IsTrue() && ready.Reason != "", err
	})
	if err != nil {
		t.Fatalf("Knative did not report on the Broker (%v): %+v", err, stalled.Status.Conditions)
	}
	stalledReady := stalled.Status.GetCondition(apis.ConditionReady)

	cases := map[string]struct {
		reason string
		change func(*eventingv1.Trigger)
		// settled says when Knative has reported on the Trigger.
		settled func(*eventingv1.Trigger) bool
		fault   playact.TriggerFault
	}{
		"Delivers": {
			reason:  "A Trigger of a Ready Broker whose subscriber resolves is Ready.",
			settled: func(tr *eventingv1.Trigger) bool { return tr.Status.GetCondition(apis.ConditionReady).IsTrue() },
		},
		"DeadLetterSinkUnresolved": {
			reason: "A Trigger whose dead-letter sink is a Service that does not exist cannot resolve it, in the resolver's words.",
			change: func(tr *eventingv1.Trigger) {
				tr.Spec.Delivery = &eventingduckv1.DeliverySpec{DeadLetterSink: &duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "dlq"}}}
			},
			settled: func(tr *eventingv1.Trigger) bool { return tr.Status.GetCondition("DeadLetterSinkResolved").IsFalse() },
			fault:   playact.DeadLetterSinkUnresolved(fmt.Sprintf(`failed to get object %s/dlq: services.serving.knative.dev "dlq" not found`, ns)),
		},
		"SubscriberUnresolved": {
			reason: "A Trigger whose subscriber is a Service that does not exist cannot resolve it, in the resolver's words.",
			change: func(tr *eventingv1.Trigger) {
				tr.Spec.Subscriber = duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "absent"}}
			},
			settled: func(tr *eventingv1.Trigger) bool { return tr.Status.GetCondition("SubscriberResolved").IsFalse() },
			fault:   playact.SubscriberUnresolved(fmt.Sprintf(`failed to get object %s/absent: services.serving.knative.dev "absent" not found`, ns)),
		},
		"BrokerNotReady": {
			reason:  "A Trigger of a Broker that is not Ready carries the Broker's condition and goes no further.",
			change:  func(tr *eventingv1.Trigger) { tr.Spec.Broker = stalled.Name },
			settled: func(tr *eventingv1.Trigger) bool { return tr.Status.GetCondition("BrokerReady") != nil },
			fault:   playact.BrokerNotReady(*stalledReady),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := &eventingv1.Trigger{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ToLower(name)},
				Spec:       eventingv1.TriggerSpec{Broker: broker.Name, Subscriber: duckv1.Destination{URI: sink.URL}},
			}
			if tc.change != nil {
				tc.change(tr)
			}
			if err := kube.Create(ctx, tr); err != nil {
				t.Fatal(err)
			}
			err := poll(ctx, func(ctx context.Context) (bool, error) {
				err := kube.Get(ctx, client.ObjectKeyFromObject(tr), tr)
				return err == nil && tr.Status.ObservedGeneration == tr.Generation && tc.settled(tr), err
			})
			if err != nil {
				t.Fatalf("Knative did not report on the Trigger (%v): %+v", err, tr.Status.Conditions)
			}
			played := tr.DeepCopy()
			playact.SettleTrigger(played, tc.fault)
			if diff := cmp.Diff(conditions(tr.Status.Conditions), conditions(played.Status.Conditions)); diff != "" {
				t.Errorf("%s\nplayact's Trigger: -real, +played:\n%s", tc.reason, diff)
			}
		})
	}
}

// A brokerReading is what the provider and the function read of a Broker:
// whether it is Ready and where it takes events.
type brokerReading struct {
	Readiness observe.EventingState
	Address   string
}

// brokerRead is what the provider and the function read of the Broker.
func brokerRead(b *eventingv1.Broker) brokerReading {
	desired := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: b.Name, Generation: b.Generation}}
	desired.SetGroupVersionKind(eventingv1.SchemeGroupVersion.WithKind("Broker"))
	return brokerReading{
		Readiness: observe.EventingReadiness([]kube.Object{desired}, func(kube.Object) kube.Object { return b }),
		Address:   observe.BrokerAddress(b),
	}
}

// TestTriggerOfNoBroker records what real Knative Eventing says of a Trigger
// whose Broker does not exist: nothing, as the MT-channel-based broker's
// reconciler takes up only Triggers of a Broker of its class. So the
// provider and the function hold a workload whose Broker is missing by
// reading the Broker, never by waiting for its Triggers, and playact plays
// no Trigger failing for its Broker's absence.
func TestTriggerOfNoBroker(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := targetClient(t)
	ns := testkit.Namespace(ctx, t, kube, "triggers-", "")
	tr := &eventingv1.Trigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan"},
		Spec:       eventingv1.TriggerSpec{Broker: "missing", Subscriber: duckv1.Destination{URI: RecordingSink(t).URL}},
	}
	if err := kube.Create(ctx, tr); err != nil {
		t.Fatal(err)
	}
	// A Trigger of a Broker that exists is reported on within a second
	// (TestPlayedTriggerAsReal).
	time.Sleep(20 * time.Second)
	if err := kube.Get(ctx, client.ObjectKeyFromObject(tr), tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Status.Conditions) > 0 {
		t.Errorf("a Trigger of a Broker that does not exist has conditions %+v; Eventing v0.50.0 wrote none", tr.Status.Conditions)
	}
}
