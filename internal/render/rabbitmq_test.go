package render

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	rmqv1alpha1 "knative.dev/eventing-rabbitmq/pkg/apis/eventing/v1alpha1"
	"knative.dev/eventing-rabbitmq/pkg/rabbit"
	rabbitv1beta1 "knative.dev/eventing-rabbitmq/third_party/pkg/apis/rabbitmq.com/v1beta1"
	kneventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	fakeeventing "knative.dev/eventing/pkg/client/injection/client/fake"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
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
		rb := &rmqv1alpha1.RabbitBroker{}
		knativetest.In(b, func(b *kneventingv1.Broker) { rb.ObjectMeta, rb.Spec = b.ObjectMeta, b.Spec })
		if err := rb.Validate(context.Background()); err != nil {
			t.Errorf("%s: eventing-rabbitmq refuses Broker %s: %v", tc.name, b.Name, err)
		}
		if cfg := tc.objects.BrokerConfig; cfg != nil {
			acceptsBrokerConfig(t, tc.name, b, cfg)
		}
		// The Trigger webhook reads the Broker to know the Trigger is its.
		ctx, _ := fakeeventing.With(context.Background(), own(t, b))
		for _, tr := range tc.objects.Triggers {
			rt := &rmqv1alpha1.RabbitTrigger{}
			knativetest.In(tr, func(tr *kneventingv1.Trigger) { rt.ObjectMeta, rt.Spec = tr.ObjectMeta, tr.Spec })
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
	ctx, _ := fakeeventing.With(context.Background(), own(t, refused))
	rt := &rmqv1alpha1.RabbitTrigger{}
	knativetest.In(trigger(v1alpha1.LambdaFunctionKind, "apps", "hello", "orders", subscription{name: "all", key: "trigger/all", parallelism: new(int32(1001))}, nil, Defaults{}, serviceSubscriber("hello")), func(tr *kneventingv1.Trigger) {
		rt.ObjectMeta, rt.Spec = tr.ObjectMeta, tr.Spec
	})
	if err := rt.Validate(ctx); err == nil {
		t.Error("eventing-rabbitmq's validation admits a parallelism of 1001")
	}
}

// acceptsBrokerConfig checks a rendered RabbitmqBrokerConfig with
// eventing-rabbitmq's own types, defaults and validation, and that its
// Broker refers to it.
func acceptsBrokerConfig(t *testing.T, name string, b *eventingv1.Broker, cfg *unstructured.Unstructured) {
	t.Helper()
	raw, err := json.Marshal(cfg.Object)
	if err != nil {
		t.Fatal(err)
	}
	rc := &rmqv1alpha1.RabbitmqBrokerConfig{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(rc); err != nil {
		t.Errorf("%s: eventing-rabbitmq's RabbitmqBrokerConfig has no field for what was rendered: %v", name, err)
	}
	if gvk := rc.GetGroupVersionKind(); cfg.GroupVersionKind() != gvk {
		t.Errorf("%s: rendered %s, eventing-rabbitmq's type is %s", name, cfg.GroupVersionKind(), gvk)
	}
	defaulted := rc.DeepCopy()
	defaulted.SetDefaults(context.Background())
	if d := cmp.Diff(rc, defaulted); d != "" {
		t.Errorf("%s: eventing-rabbitmq's defaulting changes the RabbitmqBrokerConfig, so every apply would differ (-rendered +defaulted):\n%s", name, d)
	}
	if err := rc.Validate(context.Background()); err != nil {
		t.Errorf("%s: eventing-rabbitmq refuses RabbitmqBrokerConfig %s: %v", name, rc.Name, err)
	}
	if q := rc.Spec.QueueType; q != rmqv1alpha1.QuorumQueueType && q != rmqv1alpha1.ClassicQueueType {
		t.Errorf("%s: queue type %q is neither of eventing-rabbitmq's", name, q)
	}
	want := &duckv1.KReference{APIVersion: cfg.GetAPIVersion(), Kind: cfg.GetKind(), Namespace: cfg.GetNamespace(), Name: cfg.GetName()}
	if d := cmp.Diff(want, b.Spec.Config); d != "" {
		t.Errorf("%s: Broker %s does not refer to its RabbitmqBrokerConfig (-want +got):\n%s", name, b.Name, d)
	}
}

// TestRabbitMQSkipsReplies checks that a function's Triggers on a RabbitMQ
// Broker never bind its own replies. eventing-rabbitmq binds a Trigger's
// queue to the Broker's headers exchange with the Trigger's attribute filter
// alone (its trigger reconciler ignores spec.filters, where the reply guard
// of other Brokers lives), so the binding is made here by its own
// NewBinding from what that reconciler passes, and matched as a headers
// exchange with x-match all matches a message whose headers are the event's
// attributes. Before, a Trigger without filters bound every event, the
// function's replies too; the schema now refuses one.
func TestRabbitMQSkipsReplies(t *testing.T) {
	for _, tc := range goldenCases(t) {
		b := tc.objects.Broker
		if b == nil || b.Annotations[annotationBrokerClass] != string(v1alpha1.BrokerClassRabbitMQ) || tc.objects.Service == nil {
			continue
		}
		var source string
		for _, e := range tc.objects.Service.Spec.Template.Spec.Containers[0].Env {
			if e.Name == EnvSource {
				source = e.Value
			}
		}
		for _, tr := range tc.objects.Triggers {
			var attrs map[string]string
			if tr.Spec.Filter != nil {
				attrs = tr.Spec.Filter.Attributes
			}
			filters := map[string]string{rabbit.BindingKey: tr.Name}
			maps.Copy(filters, attrs)
			binding, err := rabbit.NewBinding(&rabbit.BindingArgs{Name: tr.Name, RabbitmqClusterReference: &rabbitv1beta1.RabbitmqClusterReference{Name: "rabbit"}, Filters: filters})
			if err != nil {
				t.Fatal(err)
			}
			// An event the Trigger filters for, and the replies the
			// function sends to it, which carry its extensions on.
			event := map[string]string{"source": "/shop", "specversion": "1.0", "id": "1"}
			maps.Copy(event, attrs)
			if !bound(t, binding, event) {
				t.Errorf("%s: Trigger %s does not bind the events it filters for: the test checks nothing", tc.name, tr.Name)
			}
			for _, suffix := range []string{".response", ".error"} {
				reply := maps.Clone(event)
				reply["type"], reply["source"] = event["type"]+suffix, source
				if bound(t, binding, reply) {
					t.Errorf("%s: Trigger %s binds the function's own %s", tc.name, tr.Name, reply["type"])
				}
			}
		}
	}
}

// bound says whether a headers exchange routes a message with headers to
// the binding's queue: with x-match all, every argument not starting with
// x- must equal the header of its name.
func bound(t *testing.T, b *rabbitv1beta1.Binding, headers map[string]string) bool {
	t.Helper()
	args := map[string]string{}
	if err := json.Unmarshal(b.Spec.Arguments.Raw, &args); err != nil {
		t.Fatal(err)
	}
	if args["x-match"] != "all" {
		t.Fatalf("binding %s matches %q; this test plays x-match all", b.Name, args["x-match"])
	}
	for k, v := range args {
		if !strings.HasPrefix(k, "x-") && headers[k] != v {
			return false
		}
	}
	return true
}
