package playact

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kneventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
)

// A TriggerFault is how Knative Eventing's trigger reconciler marks a
// Trigger that cannot deliver, with its own status methods and messages,
// at the step of its reconcile that failed (pkg/reconciler/broker/trigger).
// The zero TriggerFault is none.
type TriggerFault struct {
	step triggerStep
	fail func(*kneventingv1.TriggerStatus)
}

// A triggerStep is a step of the trigger reconciler, in its order: it stops
// at the first that fails.
type triggerStep int

const (
	stepBroker triggerStep = iota
	stepSubscriber
	stepDeadLetterSink
	stepOIDC
	stepSubscription
	stepDependency
)

// BrokerNotReady is a Trigger whose Broker is not Ready, with the Broker's
// Ready condition: the reconciler propagates it, False or Unknown, and goes
// no further (TestPlayedTriggerAsReal).
func BrokerNotReady(broker apis.Condition) TriggerFault {
	return TriggerFault{step: stepBroker, fail: func(ts *kneventingv1.TriggerStatus) {
		ts.PropagateBrokerCondition(&broker)
	}}
}

// DeadLetterSinkUnresolved is a Trigger whose dead-letter sink cannot be
// resolved to a URI; resolveError is what Knative's resolver returned.
func DeadLetterSinkUnresolved(resolveError string) TriggerFault {
	return TriggerFault{step: stepDeadLetterSink, fail: func(ts *kneventingv1.TriggerStatus) {
		ts.MarkDeadLetterSinkResolvedFailed("Unable to get the dead letter sink's URI", "%v", resolveError)
	}}
}

// SubscriberUnresolved is a Trigger whose subscriber cannot be resolved to
// a URI; resolveError is what Knative's resolver returned. Real Eventing
// reports it for a Trigger of a Knative Service that has no address yet:
// "address not set for Kind = Service, Namespace = functions, Name = hello,
// APIVersion = serving.knative.dev/v1, Group = , Address = ".
func SubscriberUnresolved(resolveError string) TriggerFault {
	return TriggerFault{step: stepSubscriber, fail: func(ts *kneventingv1.TriggerStatus) {
		ts.MarkSubscriberResolvedFailed("Unable to get the Subscriber's URI", "%v", resolveError)
	}}
}

// SettleTrigger computes, without writing it, the status Knative's trigger
// reconciler gives a Trigger whose Broker is Ready: Ready, or failed with
// the fault.
func SettleTrigger(t *eventingv1.Trigger, fault TriggerFault) {
	knativetest.In(t, func(t *kneventingv1.Trigger) { settleTrigger(t, fault) })
}

// settleTrigger is SettleTrigger in Knative's own types, whose status
// methods it writes with. Its conditions start as knative.dev/pkg's
// reconciler starts them, by the Trigger's condition set, which leaves
// OIDCIdentityCreated Unknown until its step.
func settleTrigger(t *kneventingv1.Trigger, fault TriggerFault) {
	ts := &t.Status
	*ts = kneventingv1.TriggerStatus{}
	t.GetConditionSet().Manage(ts).InitializeConditions()
	ts.ObservedGeneration = t.Generation
	ready := &apis.Condition{Type: apis.ConditionReady, Status: corev1.ConditionTrue}
	steps := []func(){
		stepBroker:     func() { ts.PropagateBrokerCondition(ready) },
		stepSubscriber: ts.MarkSubscriberResolvedSucceeded,
		stepDeadLetterSink: func() {
			if d := t.Spec.Delivery; d != nil && d.DeadLetterSink != nil {
				ts.MarkDeadLetterSinkResolvedSucceeded()
			} else {
				ts.MarkDeadLetterSinkNotConfigured()
			}
		},
		// As auth.SetupOIDCServiceAccount marks it with OIDC off, Eventing's
		// default.
		stepOIDC:         func() { ts.MarkOIDCIdentityCreatedSucceededWithReason("authentication-oidc feature disabled", "") },
		stepSubscription: func() { ts.PropagateSubscriptionCondition(ready) },
		stepDependency:   ts.MarkDependencySucceeded,
	}
	for step, succeed := range steps {
		if fault.fail != nil && triggerStep(step) == fault.step {
			fault.fail(ts)
			return
		}
		succeed()
	}
}

// FailTrigger plays Knative Eventing reporting a Trigger that cannot
// deliver.
func FailTrigger(ctx context.Context, t T, c client.Client, trigger *eventingv1.Trigger, fault TriggerFault) {
	t.Helper()
	SettleTrigger(trigger, fault)
	if err := c.Status().Update(ctx, trigger); err != nil {
		t.Fatal(err)
	}
}

// An Eventing plays Knative Eventing's controllers in a namespace while a
// test runs: every Broker and Trigger it has not reported on for its
// generation, or not Ready, becomes Ready, as MarkEventingReady writes it,
// and every such PingSource settles against its Service, as
// SettlePingSourceIn writes it. A test that
// plays a failure, or a Broker that must wait for its address, leaves the
// object to itself first.
type Eventing struct {
	mu   sync.Mutex
	left map[string]bool
}

// Leave keeps the player off a Broker or Trigger of this name.
func (e *Eventing) Leave(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.left == nil {
		e.left = map[string]bool{}
	}
	e.left[name] = true
}

func (e *Eventing) leaves(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.left[name]
}

// Run plays until ctx ends, looking every interval. Writes that fail, such
// as a conflict with the provider's own update, are tried again at the next
// look.
func (e *Eventing) Run(ctx context.Context, c client.Client, namespace string, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if objs, err := Unreported(ctx, c, namespace); err == nil {
			for _, o := range objs {
				if !e.leaves(o.GetName()) {
					_ = Try(func(t T) { MarkEventingReady(ctx, t, c, o) })
				}
			}
		}
		if pings, err := unreportedPings(ctx, c, namespace); err == nil {
			for _, ps := range pings {
				if !e.leaves(ps.GetName()) {
					_ = Try(func(t T) { SettlePingSourceIn(ctx, t, c, ps) })
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Unreported lists the Brokers and Triggers of a namespace that are not
// Ready at their generation, with their kinds set, which a list leaves out
// and MarkEventingReady reads.
func Unreported(ctx context.Context, c client.Client, namespace string) ([]client.Object, error) {
	brokers, triggers := &eventingv1.BrokerList{}, &eventingv1.TriggerList{}
	for _, l := range []client.ObjectList{brokers, triggers} {
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
	}
	var out []client.Object
	add := func(o client.Object, kind string, s duckv1.Status) {
		if !reported(o, s) {
			o.GetObjectKind().SetGroupVersionKind(eventingv1.SchemeGroupVersion.WithKind(kind))
			out = append(out, o)
		}
	}
	for i := range brokers.Items {
		add(&brokers.Items[i], "Broker", brokers.Items[i].Status.Status)
	}
	for i := range triggers.Items {
		add(&triggers.Items[i], "Trigger", triggers.Items[i].Status.Status)
	}
	return out, nil
}

// reported is true when Knative Eventing's status of an object is Ready at
// its generation.
func reported(o client.Object, s duckv1.Status) bool {
	return s.ObservedGeneration == o.GetGeneration() && s.GetCondition(apis.ConditionReady).IsTrue()
}

// rabbitBrokerConditions are the conditions eventing-rabbitmq's broker
// reconciler keeps on a Broker of its class (pkg/reconciler/broker).
var rabbitBrokerConditions = apis.NewLivingConditionSet("ExchangeReady", "DLXReady", "DeadLetterSinkReady", "SecretReady", "IngressReady", "Addressable")

// FailRabbitMQBroker plays eventing-rabbitmq's broker reconciler failing to
// resolve a Broker's RabbitMQ: resolveError is what resolving the Broker's
// spec.config returned, such as a RabbitmqCluster that does not exist.
func FailRabbitMQBroker(ctx context.Context, t T, c client.Client, b *eventingv1.Broker, resolveError string) {
	t.Helper()
	knativetest.In(b, func(b *kneventingv1.Broker) {
		m := rabbitBrokerConditions.Manage(&b.Status)
		m.InitializeConditions()
		m.MarkFalse("ExchangeReady", "ExchangeCredentialsUnavailable", "Failed to get arguments for creating exchange: %s", resolveError)
		b.Status.ObservedGeneration = b.Generation
	})
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
}
