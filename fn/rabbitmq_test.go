package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// rabbitSpec is a prebuilt function on a RabbitMQ Broker it creates, with
// classic queues on the cluster orders-rabbitmq.
const rabbitSpec = `
source: {image: {repository: ghcr.io/acme/order-router, tag: v1.4.0}}
eventing:
  broker: {name: orders, create: true, class: RabbitMQBroker, rabbitmq: {cluster: orders-rabbitmq, queueType: classic}}
  triggers: [{name: created, filters: {type: com.example.order.created}}]
`

// TestRabbitMQBrokerConfigComposed checks that Direct mode composes a
// RabbitMQ Broker's RabbitmqBrokerConfig with the Broker, ready as soon as
// it exists, and leaves both out when the Broker is another's.
func TestRabbitMQBrokerConfigComposed(t *testing.T) {
	objs := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: parseSpec(t, rabbitSpec)})
	config, broker := "RabbitmqBrokerConfig/orders", "Broker/orders"
	cases := map[string]struct {
		reason   string
		observed map[string]*fnv1.Resource
		required map[string]*fnv1.Resources
		want     map[string]fnv1.Ready
	}{
		"FirstPass": {
			reason:   "A new Broker is composed with its RabbitmqBrokerConfig, neither ready yet.",
			required: map[string]*fnv1.Resources{"broker-orders": {}},
			want:     map[string]fnv1.Ready{config: fnv1.Ready_READY_FALSE, broker: fnv1.Ready_READY_FALSE},
		},
		"ConfigExists": {
			reason: "A RabbitmqBrokerConfig has no status: it is ready once it exists.",
			observed: map[string]*fnv1.Resource{
				config: {Resource: toStruct(t, objs.BrokerConfig)},
				broker: {Resource: readyStruct(t, objs.Broker)},
			},
			want: map[string]fnv1.Ready{config: fnv1.Ready_READY_TRUE, broker: fnv1.Ready_READY_TRUE},
		},
		"BrokerOfAnother": {
			reason:   "Another composite's Broker is used as it is, and so is its RabbitmqBrokerConfig: Crossplane would refuse to take either over.",
			required: map[string]*fnv1.Resources{"broker-orders": {Items: []*fnv1.Resource{{Resource: readyStruct(t, objs.Broker)}}}},
			want:     map[string]fnv1.Ready{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{
				Input:             codectest.Struct(t, testInput),
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, rabbitSpec, ""))}, Resources: tc.observed},
				RequiredResources: tc.required,
			}
			rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]fnv1.Ready{}
			for name, r := range rsp.GetDesired().GetResources() {
				if name == config || name == broker {
					got[name] = r.GetReady()
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\nRunFunction(...): the Broker's composed objects and their readiness, -want +got:\n%s", tc.reason, d)
			}
			r, ok := rsp.GetDesired().GetResources()[config]
			if !ok {
				return
			}
			spec, _, _ := unstructured.NestedMap(r.GetResource().AsMap(), "spec")
			want := map[string]any{"queueType": "classic", "rabbitmqClusterReference": map[string]any{"name": "orders-rabbitmq", "namespace": testNS}}
			if d := cmp.Diff(want, spec); d != "" {
				t.Errorf("%s\nRunFunction(...): the composed RabbitmqBrokerConfig's spec, -want +got:\n%s", tc.reason, d)
			}
		})
	}
}
