package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestEventingFailures plays Knative Eventing reporting a Trigger that
// cannot deliver, with the reasons and messages its trigger reconciler
// writes, and checks that the function is not Ready while it cannot, says
// which Trigger and why, and is Ready again once Knative is.
func TestEventingFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "eventing", keep)
	fn := newImageFunction(ns, "listener")
	fn.Spec.ForProvider.Eventing.Delivery = &v1alpha1.Delivery{DeadLetterSink: &v1alpha1.Sink{Ref: &v1alpha1.SinkReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "dlq"}}}
	trigger := render.TriggerName(v1alpha1.LambdaFunctionKind, "listener", "orders", "trigger/orders")
	p.eventing.Leave(trigger)
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	svc := &servingv1.Service{}
	tr := &eventingv1.Trigger{}
	wait.Until(ctx, t, "the Service and the Trigger exist", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), svc); err != nil {
			return err.Error()
		}
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: trigger}, tr))
	})
	playact.MarkServiceReady(ctx, t, c, svc)
	mg := &v1alpha1.LambdaFunction{}
	readyIs := func(status corev1.ConditionStatus, reason xpv2.ConditionReason, phase v1alpha1.Phase, says ...string) func() string {
		return func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
				return err.Error()
			}
			r := mg.GetCondition(xpv2.TypeReady)
			got := fmt.Sprintf("phase %s, Ready %s %s %q", mg.Status.AtProvider.Phase, r.Status, r.Reason, r.Message)
			if r.Status != status || r.Reason != reason || mg.Status.AtProvider.Phase != phase {
				return got
			}
			for _, s := range says {
				if !strings.Contains(r.Message, s) {
					return got + "; lacks " + s
				}
			}
			return ""
		}
	}
	wait.Until(ctx, t, "a Trigger Knative has not reported on keeps the function from Ready", readyIs(corev1.ConditionFalse, v1alpha1.ReasonDeploying, v1alpha1.PhaseDeploying, "waiting for Knative Eventing", "Trigger "+trigger))

	steps := []struct {
		reason string
		fault  playact.TriggerFault
		want   func() string
	}{
		{
			reason: "A dead-letter sink Knative cannot resolve fails the function, naming the Trigger and the resolver's error.",
			fault:  playact.DeadLetterSinkUnresolved(`failed to get object ` + ns + `/dlq: services.serving.knative.dev "dlq" not found`),
			want: readyIs(corev1.ConditionFalse, v1alpha1.ReasonEventingFailed, v1alpha1.PhaseFailed,
				"Trigger "+trigger, "Unable to get the dead letter sink's URI", `"dlq" not found`),
		},
		{
			reason: "Once Knative resolves it, the function is Ready without anything else changing.",
			want:   readyIs(corev1.ConditionTrue, xpv2.ReasonAvailable, v1alpha1.PhaseReady),
		},
		{
			reason: "A Trigger whose Broker is gone fails the function with Knative's reason.",
			fault:  playact.BrokerDoesNotExist("default"),
			want: readyIs(corev1.ConditionFalse, v1alpha1.ReasonEventingFailed, v1alpha1.PhaseFailed,
				"Trigger "+trigger, "BrokerDoesNotExist", `Broker "default" does not exist`),
		},
	}
	for _, s := range steps {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: trigger}, tr); err != nil {
			t.Fatal(err)
		}
		playact.FailTrigger(ctx, t, c, tr, s.fault)
		reported := time.Now()
		wait.Until(ctx, t, s.reason, s.want)
		t.Logf("read %s after Knative reported it (poll interval %s)", time.Since(reported).Round(time.Millisecond), testPoll)
	}
}

// TestDeadLetterSinkDefault checks that a ProviderConfig's dead-letter sink
// reaches the Triggers of a function that names none.
func TestDeadLetterSinkDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "dead-letters", keep)
	const sink = "http://dead-letters.platform.svc.cluster.local"
	// The provider's own ProviderConfig controller writes it too.
	wait.Until(ctx, t, "the ProviderConfig names a dead-letter sink", func() string {
		pc := &v1alpha1.ProviderConfig{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pc); err != nil {
			return err.Error()
		}
		pc.Spec.Eventing = &v1alpha1.EventingDefaults{DeadLetterSink: &v1alpha1.Sink{URI: ptr[v1alpha1.HTTPURL](sink)}}
		return wait.ErrString(c.Update(ctx, pc))
	})
	fn := newImageFunction(ns, "forgetful")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	name := render.TriggerName(v1alpha1.LambdaFunctionKind, "forgetful", "orders", "trigger/orders")
	wait.Until(ctx, t, "the Trigger sends what it cannot deliver to the provider config's sink", func() string {
		tr := &eventingv1.Trigger{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tr); err != nil {
			return err.Error()
		}
		if d := tr.Spec.Delivery; d == nil || d.DeadLetterSink == nil || d.DeadLetterSink.URI.String() != sink {
			return fmt.Sprintf("delivery %+v", d)
		}
		return ""
	})
}

// TestRabbitMQBrokerFailure plays eventing-rabbitmq failing to find the
// RabbitmqCluster a Broker's spec.config names, as its broker reconciler
// reports it, and checks that the function names the Broker and why.
func TestRabbitMQBrokerFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "rabbitmq", keep)
	p.eventing.Leave("orders")
	fn := newImageFunction(ns, "router")
	fn.Spec.ForProvider.Eventing.Broker = &v1alpha1.Broker{Name: "orders", Create: true, Class: v1alpha1.BrokerClassRabbitMQ,
		RabbitMQ: &v1alpha1.RabbitMQBroker{Cluster: ptr[v1alpha1.DNSSubdomain]("orders-rabbitmq")}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	svc, b := &servingv1.Service{}, &eventingv1.Broker{}
	wait.Until(ctx, t, "the Service and the Broker exist", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), svc); err != nil {
			return err.Error()
		}
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders"}, b))
	})
	if b.Spec.Config == nil || b.Spec.Config.Kind != "RabbitmqCluster" || b.Spec.Config.Name != "orders-rabbitmq" {
		t.Errorf("the Broker's spec.config is %+v, want the RabbitmqCluster orders-rabbitmq", b.Spec.Config)
	}
	playact.MarkServiceReady(ctx, t, c, svc)
	playact.FailRabbitMQBroker(ctx, t, c, b, `rabbitmqclusters.rabbitmq.com "orders-rabbitmq" not found`)
	wait.Until(ctx, t, "EventingFailed naming the Broker and eventing-rabbitmq's reason", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		want := `Broker orders: ExchangeCredentialsUnavailable: Failed to get arguments for creating exchange: rabbitmqclusters.rabbitmq.com "orders-rabbitmq" not found`
		if r.Reason != v1alpha1.ReasonEventingFailed || r.Message != want || mg.Status.AtProvider.Phase != v1alpha1.PhaseFailed {
			return fmt.Sprintf("phase %s, Ready %s %s %q", mg.Status.AtProvider.Phase, r.Status, r.Reason, r.Message)
		}
		return ""
	})
}
