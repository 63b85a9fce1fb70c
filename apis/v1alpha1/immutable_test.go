package v1alpha1_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestRabbitMQBrokerIsImmutable checks that the API server refuses, at
// admission, the changes to a created RabbitMQ Broker that eventing-rabbitmq's
// webhook would refuse later (it compares a Broker's whole spec, and a
// RabbitmqBrokerConfig's), and admits the rest.
func TestRabbitMQBrokerIsImmutable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := testkit.Client(t, controlPlane.Config(t))
	ns := testkit.Namespace(ctx, t, c, "admission-", "")
	cluster := v1alpha1.DNSSubdomain("orders-rabbitmq")

	cases := map[string]struct {
		reason string
		change func(b *v1alpha1.Broker)
		want   string
	}{
		"QueueType": {
			reason: "A queue type change would need a new RabbitmqBrokerConfig spec, which eventing-rabbitmq refuses.",
			change: func(b *v1alpha1.Broker) { b.RabbitMQ.QueueType = v1alpha1.RabbitMQQueueClassic },
			want:   "rabbitmq and delivery cannot change",
		},
		"Cluster": {
			reason: "Another cluster would change the Broker's config, which eventing-rabbitmq refuses.",
			change: func(b *v1alpha1.Broker) { b.RabbitMQ.Cluster = new(v1alpha1.DNSSubdomain("other")) },
			want:   "rabbitmq and delivery cannot change",
		},
		"Delivery": {
			reason: "A RabbitMQ Broker's delivery is part of its immutable spec.",
			change: func(b *v1alpha1.Broker) { b.Delivery = &v1alpha1.Delivery{Retry: new(int32(3))} },
			want:   "rabbitmq and delivery cannot change",
		},
		"NewName": {
			reason: "A Broker of another name is a new Broker, whose settings are its own.",
			change: func(b *v1alpha1.Broker) {
				b.Name = "orders-classic"
				b.RabbitMQ.QueueType = v1alpha1.RabbitMQQueueClassic
			},
		},
		"NotCreated": {
			reason: "A Broker the resource stops creating is no longer its to configure.",
			change: func(b *v1alpha1.Broker) {
				b.Create = false
				b.RabbitMQ = nil
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fn := &v1alpha1.LambdaFunction{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rabbit-" + strings.ToLower(name)},
				Spec: v1alpha1.LambdaFunctionSpec{ForProvider: v1alpha1.LambdaFunctionParameters{
					Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: new(v1alpha1.ImageTag("v1"))}},
					Eventing: &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{
						Name: "orders", Create: true, Class: v1alpha1.BrokerClassRabbitMQ,
						RabbitMQ: &v1alpha1.RabbitMQBroker{Cluster: &cluster},
					}},
				}},
			}
			if err := c.Create(ctx, fn); err != nil {
				t.Fatal(err)
			}
			tc.change(fn.Spec.ForProvider.Eventing.Broker)
			err := c.Update(ctx, fn)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.want == "" && err != nil {
				t.Errorf("%s\nUpdate(): %v; want it admitted", tc.reason, err)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("%s\nUpdate(): %q; want a refusal saying %q", tc.reason, got, tc.want)
			}
		})
	}
}
