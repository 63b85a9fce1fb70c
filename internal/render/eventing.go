package render

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	eventingduckv1 "knative.dev/eventing/pkg/apis/duck/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// What a forward waits for.
const (
	fmtBrokerUnresolved = "forward %s waits for the address of %s: its Broker is not ready yet"
	fmtBadAddress       = "forward %s waits for a usable address: %q of %s is not a URL"
)

// Annotations of Knative's eventing objects.
const (
	// annotationBrokerClass selects a Broker's implementation.
	annotationBrokerClass = "eventing.knative.dev/broker.class"
	// annotationRabbitMQParallelism is eventing-rabbitmq's per-Trigger
	// dispatcher parallelism.
	annotationRabbitMQParallelism = "rabbitmq.eventing.knative.dev/parallelism"
)

// eventing-rabbitmq's RabbitmqBrokerConfig.
const (
	RabbitMQBrokerConfigAPIVersion = "eventing.knative.dev/v1alpha1"
	RabbitMQBrokerConfigKind       = "RabbitmqBrokerConfig"
)

// DefaultBroker is the Broker a workload uses when its spec names none.
const DefaultBroker = "default"

// BrokerName is the Broker a workload's triggers listen on.
func BrokerName(b *v1alpha1.Broker) string {
	if b == nil || b.Name == "" {
		return DefaultBroker
	}
	return string(b.Name)
}

// creatorDomain prefixes the annotations by which each resource that
// creates a Broker says so on it: a Broker is shared, so the resources that
// create it and are not gone are only known from the Broker itself.
const creatorDomain = "creators." + v1alpha1.Group

// CreatorAnnotation is the annotation by which a resource says it creates a
// Broker. Kind and name fit a key's 63 characters: names have at most 46.
func CreatorAnnotation(kind, name string) string {
	return creatorDomain + "/" + kind + "." + name
}

// Creators are the annotations of a Broker by which resources say they
// create it.
func Creators(b metav1.Object) []string {
	var out []string
	for k := range b.GetAnnotations() {
		if isCreator(k) {
			out = append(out, k)
		}
	}
	return out
}

// isCreator is true of the key of a creator's annotation.
func isCreator(key string) bool {
	return strings.HasPrefix(key, creatorDomain+"/")
}

// broker renders the Broker a workload creates, with the RabbitmqBrokerConfig
// it gets of its own, or nils when it uses one that exists.
func broker(kind, namespace, name string, b *v1alpha1.Broker) (*eventingv1.Broker, *unstructured.Unstructured) {
	if b == nil || !b.Create {
		return nil, nil
	}
	class := b.Class
	if class == "" {
		class = v1alpha1.BrokerClassMTChannelBased
	}
	config := rabbitmqBrokerConfig(namespace, BrokerName(b), b.RabbitMQ)
	return &eventingv1.Broker{
		TypeMeta: metav1.TypeMeta{APIVersion: eventingAPIVersion, Kind: "Broker"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   namespace,
			Name:        BrokerName(b),
			Labels:      brokerLabels(),
			Annotations: map[string]string{annotationBrokerClass: string(class), CreatorAnnotation(kind, name): "true"},
		},
		Spec: eventingv1.BrokerSpec{Config: rabbitmqConfig(namespace, b.RabbitMQ, config), Delivery: delivery(b.Delivery, nil, nil)},
	}, config
}

// brokerLabels are those of a Broker and its RabbitmqBrokerConfig. A Broker
// is shared by every resource that uses it, so they name none of them: each
// would take the labels from the other.
func brokerLabels() map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelComponent: ComponentEventing}
}

// rabbitmqConfig is the spec.config eventing-rabbitmq requires of a Broker
// of class RabbitMQBroker: the RabbitmqBrokerConfig it names or gets.
func rabbitmqConfig(namespace string, r *v1alpha1.RabbitMQBroker, own *unstructured.Unstructured) *duckv1.KReference {
	switch {
	case own != nil:
		return &duckv1.KReference{APIVersion: own.GetAPIVersion(), Kind: own.GetKind(), Namespace: namespace, Name: own.GetName()}
	case r != nil && r.BrokerConfig != nil:
		return &duckv1.KReference{APIVersion: RabbitMQBrokerConfigAPIVersion, Kind: RabbitMQBrokerConfigKind, Namespace: namespace, Name: string(*r.BrokerConfig)}
	}
	return nil
}

// rabbitmqBrokerConfig renders the RabbitmqBrokerConfig of a Broker that
// names a RabbitmqCluster, named like the Broker. It is how eventing-rabbitmq
// takes a queue type: a Broker that referred to the cluster itself would get
// classic queues, a path eventing-rabbitmq deprecates. eventing-rabbitmq has
// no Go client to speak of, so the object is unstructured; its own
// validation checks it in the tests.
func rabbitmqBrokerConfig(namespace, broker string, r *v1alpha1.RabbitMQBroker) *unstructured.Unstructured {
	if r == nil || r.Cluster == nil {
		return nil
	}
	queueType := r.QueueType
	if queueType == "" {
		queueType = v1alpha1.RabbitMQQueueQuorum
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			// The namespace is what eventing-rabbitmq's defaulting would
			// set, so the applied object never differs from the live one.
			"rabbitmqClusterReference": map[string]any{"name": string(*r.Cluster), "namespace": namespace},
			"queueType":                string(queueType),
		},
	}}
	u.SetAPIVersion(RabbitMQBrokerConfigAPIVersion)
	u.SetKind(RabbitMQBrokerConfigKind)
	u.SetNamespace(namespace)
	u.SetName(broker)
	u.SetLabels(brokerLabels())
	return u
}

// A subscription is one Trigger's worth of a workload's eventing.
type subscription struct {
	name string
	// key is unique among the workload's subscriptions, whatever their
	// names.
	key     string
	filters map[string]string
	// not are attributes whose events the subscription never delivers: a
	// function's own replies, which the Broker ingests like any event, and
	// forwarded events that passed as many forwards as allowed.
	not map[string]string
	// parallelism of a RabbitMQBroker's dispatcher for the Trigger.
	parallelism *int32
	delivery    *v1alpha1.Delivery
}

// trigger renders a Trigger of the workload's Broker that delivers to the
// subscriber.
func trigger(kind, namespace, name, brokerName string, s subscription, fallback *v1alpha1.Delivery, d Defaults, subscriber duckv1.Destination) *eventingv1.Trigger {
	t := &eventingv1.Trigger{
		TypeMeta: metav1.TypeMeta{APIVersion: eventingAPIVersion, Kind: "Trigger"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      TriggerName(kind, name, s.name, s.key),
			Labels:    labels(kind, name, ComponentEventing),
		},
		Spec: eventingv1.TriggerSpec{
			Broker:     brokerName,
			Subscriber: subscriber,
			Delivery:   delivery(s.delivery, fallback, d.DeadLetterSink),
		},
	}
	if len(s.filters) > 0 {
		t.Spec.Filter = &eventingv1.TriggerFilter{Attributes: eventingv1.TriggerFilterAttributes(s.filters)}
	}
	if s.parallelism != nil {
		t.Annotations = map[string]string{annotationRabbitMQParallelism: strconv.Itoa(int(*s.parallelism))}
	}
	if len(s.not) == 0 {
		return t
	}
	// Filters override the attribute filter where the Broker knows them,
	// so they repeat it; a Broker that does not still applies the filter.
	if len(s.filters) > 0 {
		t.Spec.Filters = append(t.Spec.Filters, eventingv1.SubscriptionsAPIFilter{Exact: maps.Clone(s.filters)})
	}
	t.Spec.Filters = append(t.Spec.Filters, eventingv1.SubscriptionsAPIFilter{Not: &eventingv1.SubscriptionsAPIFilter{Exact: maps.Clone(s.not)}})
	return t
}

// AnnotationSubscriberServed is set on each Trigger that delivers to the
// workload's own Knative Service once the Service has served (Observed's
// Served). Knative Eventing v0.50.0's Trigger reconciler tracks the
// subscriber under the Broker's key, not the Trigger's (trigger.go:139),
// so a Service that gets its address does not wake a Trigger that failed to
// resolve it before: on the real cluster, with 50 functions applied at
// once, such Triggers waited over ten minutes for their error backoff. Any
// change to a Trigger has Knative reconcile it at once, and this one comes
// once, when the Service first serves.
const AnnotationSubscriberServed = v1alpha1.Group + "/subscriber-served"

// served sets AnnotationSubscriberServed on the Triggers that deliver to
// the workload's own Knative Service, once it has served.
func served(triggers []*eventingv1.Trigger, name string, o Observed) {
	if !o.Served {
		return
	}
	own := serviceSubscriber(name).Ref
	for _, t := range triggers {
		if ref := t.Spec.Subscriber.Ref; ref == nil || *ref != *own {
			continue
		}
		metav1.SetMetaDataAnnotation(&t.ObjectMeta, AnnotationSubscriberServed, "true")
	}
}

// serviceSubscriber addresses the workload's own Knative Service.
func serviceSubscriber(name string) duckv1.Destination {
	return duckv1.Destination{Ref: &duckv1.KReference{APIVersion: servingAPIVersion, Kind: "Service", Name: name}}
}

// brokerAddress is a forward's Broker's address as the Broker reports it,
// never a guessed URL. Without one it says what the forward waits for.
func brokerAddress(forward, target string, o Observed) (string, string) {
	addr := o.ForwardAddresses[target]
	if addr == "" {
		return "", fmt.Sprintf(fmtBrokerUnresolved, forward, target)
	}
	u, err := apis.ParseURL(addr)
	if err != nil || u == nil || u.Host == "" {
		return "", fmt.Sprintf(fmtBadAddress, forward, addr, target)
	}
	return u.String(), ""
}

// delivery converts a delivery spec; the trigger's own wins over the
// workload's default as a whole, as Knative merges neither. The provider
// config's dead-letter sink fills in where neither names one.
func delivery(own, fallback *v1alpha1.Delivery, sink *v1alpha1.Sink) *eventingduckv1.DeliverySpec {
	d := own
	if d == nil {
		d = fallback
	}
	if sink != nil && (d == nil || d.DeadLetterSink == nil) {
		with := v1alpha1.Delivery{}
		if d != nil {
			with = *d
		}
		with.DeadLetterSink = sink
		d = &with
	}
	if d == nil {
		return nil
	}
	out := &eventingduckv1.DeliverySpec{Retry: d.Retry}
	if d.BackoffPolicy != nil {
		p := eventingduckv1.BackoffPolicyType(*d.BackoffPolicy)
		out.BackoffPolicy = &p
	}
	if d.BackoffDelay != nil {
		out.BackoffDelay = ptr.To(string(*d.BackoffDelay))
	}
	if s := d.DeadLetterSink; s != nil {
		out.DeadLetterSink = &duckv1.Destination{}
		if s.Ref != nil {
			out.DeadLetterSink.Ref = &duckv1.KReference{APIVersion: s.Ref.APIVersion, Kind: s.Ref.Kind, Name: string(s.Ref.Name)}
		}
		if s.URI != nil {
			// The schema admits only http(s) URLs, which always parse.
			u, _ := apis.ParseURL(string(*s.URI))
			out.DeadLetterSink.URI = u
		}
	}
	return out
}

// BrokerNamed returns what a Broker the provider created by that name may
// consist of, its RabbitmqBrokerConfig and then the Broker, as Objects'
// Brokers are ordered. Only their kinds and names are set: they are for
// finding the live objects, not for applying.
func BrokerNamed(namespace, name string) []kube.Object {
	config := &unstructured.Unstructured{}
	config.SetAPIVersion(RabbitMQBrokerConfigAPIVersion)
	config.SetKind(RabbitMQBrokerConfigKind)
	config.SetNamespace(namespace)
	config.SetName(name)
	return []kube.Object{config, &eventingv1.Broker{
		TypeMeta:   metav1.TypeMeta{APIVersion: eventingAPIVersion, Kind: "Broker"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
	}}
}
