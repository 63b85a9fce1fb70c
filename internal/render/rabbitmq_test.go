package render

import (
	"context"
	"strings"
	"testing"

	rmqv1alpha1 "knative.dev/eventing-rabbitmq/pkg/apis/eventing/v1alpha1"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	fakeeventing "knative.dev/eventing/pkg/client/injection/client/fake"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestRabbitMQAcceptsRendered runs eventing-rabbitmq's own admission
// validation (v0.48.0, the newest the module proxy serves; it builds with
// this module's Knative) on every RabbitMQ Broker rendered from the
// examples and valid manifests, and on every Trigger of one.
func TestRabbitMQAcceptsRendered(t *testing.T) {
	brokers := 0
	for _, tc := range goldenCases(t) {
		b := tc.objects.Broker
		if b == nil || b.Annotations[annotationBrokerClass] != string(v1alpha1.BrokerClassRabbitMQ) {
			continue
		}
		brokers++
		rb := &rmqv1alpha1.RabbitBroker{ObjectMeta: b.ObjectMeta, Spec: b.Spec}
		if err := rb.Validate(context.Background()); err != nil {
			t.Errorf("%s: eventing-rabbitmq refuses Broker %s: %v", tc.name, b.Name, err)
		}
		// The Trigger webhook reads the Broker to know the Trigger is its.
		ctx, _ := fakeeventing.With(context.Background(), b)
		for _, tr := range tc.objects.Triggers {
			rt := &rmqv1alpha1.RabbitTrigger{ObjectMeta: tr.ObjectMeta, Spec: tr.Spec}
			if err := rt.Validate(ctx); err != nil {
				t.Errorf("%s: eventing-rabbitmq refuses Trigger %s: %v", tc.name, tr.Name, err)
			}
		}
	}
	if brokers == 0 {
		t.Fatal("no example or valid manifest renders a RabbitMQ Broker")
	}

	// The validation is eventing-rabbitmq's, and strict: a Broker of its
	// class without spec.config, which this provider rendered before, is
	// refused, as is a parallelism it does not take.
	refused := &eventingv1.Broker{}
	refused.Name, refused.Namespace = "orders", "apps"
	refused.Annotations = map[string]string{annotationBrokerClass: string(v1alpha1.BrokerClassRabbitMQ)}
	if err := (&rmqv1alpha1.RabbitBroker{ObjectMeta: refused.ObjectMeta}).Validate(context.Background()); err == nil || !strings.Contains(err.Error(), "spec.config") {
		t.Errorf("eventing-rabbitmq's validation admits a RabbitMQ Broker without spec.config: %v", err)
	}
	ctx, _ := fakeeventing.With(context.Background(), refused)
	tr := trigger(v1alpha1.LambdaFunctionKind, "apps", "hello", "orders", subscription{name: "all", key: "trigger/all", parallelism: new(int32(1001))}, nil, Defaults{}, serviceSubscriber("hello"))
	if err := (&rmqv1alpha1.RabbitTrigger{ObjectMeta: tr.ObjectMeta, Spec: tr.Spec}).Validate(ctx); err == nil {
		t.Error("eventing-rabbitmq's validation admits a parallelism of 1001")
	}
}
