package v1alpha1

// A BrokerClass is the Knative Broker implementation.
// +kubebuilder:validation:Enum=MTChannelBasedBroker;RabbitMQBroker
type BrokerClass string

// Broker classes.
const (
	BrokerClassMTChannelBased BrokerClass = "MTChannelBasedBroker"
	BrokerClassRabbitMQ       BrokerClass = "RabbitMQBroker"
)

// A BackoffPolicy is how the delay between delivery retries grows.
// +kubebuilder:validation:Enum=linear;exponential
type BackoffPolicy string

// Backoff policies.
const (
	BackoffPolicyLinear      BackoffPolicy = "linear"
	BackoffPolicyExponential BackoffPolicy = "exponential"
)

// A Broker is the Knative Broker the workload receives events from.
// +kubebuilder:validation:XValidation:rule="!has(self.rabbitmq) || (has(self.class) && self.class == 'RabbitMQBroker')",message="rabbitmq applies only to a Broker of class RabbitMQBroker"
// +kubebuilder:validation:XValidation:rule="!(has(self.create) && self.create && has(self.class) && self.class == 'RabbitMQBroker') || has(self.rabbitmq)",message="a RabbitMQBroker created here needs rabbitmq.brokerConfig or rabbitmq.cluster: eventing-rabbitmq refuses a Broker without spec.config"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.create) && oldSelf.create && has(self.create) && self.create && has(oldSelf.class) && oldSelf.class == 'RabbitMQBroker' && has(self.class) && self.class == 'RabbitMQBroker' && has(self.name) && has(oldSelf.name) && self.name == oldSelf.name) || (has(self.rabbitmq) == has(oldSelf.rabbitmq) && (!has(self.rabbitmq) || self.rabbitmq == oldSelf.rabbitmq) && has(self.delivery) == has(oldSelf.delivery) && (!has(self.delivery) || self.delivery == oldSelf.delivery))",message="a RabbitMQ Broker's rabbitmq and delivery cannot change: eventing-rabbitmq refuses to change a Broker's spec; give the Broker a new name"
type Broker struct {
	// Name of the Broker in the resource's namespace.
	// +kubebuilder:default=default
	// +optional
	Name DNSLabel `json:"name,omitempty"`

	// Create the Broker when it does not exist. A Broker created here is
	// deleted by the last to go of the workloads that create it or listen
	// on it; one that existed before is never deleted.
	// +optional
	Create bool `json:"create,omitempty"`

	// Class of a Broker created here.
	// +kubebuilder:default=MTChannelBasedBroker
	// +optional
	Class BrokerClass `json:"class,omitempty"`

	// Delivery is the Broker's own delivery spec, for a Broker created here.
	// +optional
	Delivery *Delivery `json:"delivery,omitempty"`

	// RabbitMQ says which RabbitMQ a Broker of class RabbitMQBroker created
	// here uses.
	// +optional
	RabbitMQ *RabbitMQBroker `json:"rabbitmq,omitempty"`
}

// A RabbitMQQueueType is the kind of queue eventing-rabbitmq declares for a
// Broker's Triggers.
// +kubebuilder:validation:Enum=quorum;classic
type RabbitMQQueueType string

// RabbitMQ queue types.
const (
	// RabbitMQQueueQuorum queues are replicated across the cluster's nodes.
	RabbitMQQueueQuorum RabbitMQQueueType = "quorum"
	// RabbitMQQueueClassic queues live on one node.
	RabbitMQQueueClassic RabbitMQQueueType = "classic"
)

// A RabbitMQBroker says which RabbitMQ a Broker of class RabbitMQBroker
// uses: eventing-rabbitmq's spec.config.
// +kubebuilder:validation:XValidation:rule="has(self.brokerConfig) != has(self.cluster)",message="exactly one of brokerConfig or cluster must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.queueType) || has(self.cluster)",message="queueType applies with cluster: a RabbitmqBrokerConfig named by brokerConfig sets its own queue type"
type RabbitMQBroker struct {
	// BrokerConfig names a RabbitmqBrokerConfig (eventing.knative.dev/v1alpha1)
	// in the resource's namespace, written by the platform, which names the
	// RabbitmqCluster, queue type and vhost.
	// +optional
	BrokerConfig *DNSSubdomain `json:"brokerConfig,omitempty"`

	// Cluster names a RabbitmqCluster (rabbitmq.com/v1beta1) in the
	// resource's namespace. The Broker gets a RabbitmqBrokerConfig of its
	// own name that names the cluster and the queue type; it is created and
	// deleted with the Broker.
	// +optional
	Cluster *DNSSubdomain `json:"cluster,omitempty"`

	// QueueType of the Broker's queues, with Cluster: quorum (the default,
	// replicated, as eventing-rabbitmq recommends) or classic.
	// +optional
	QueueType RabbitMQQueueType `json:"queueType,omitempty"`
}

// Delivery configures how Knative retries events that the subscriber did not
// accept, and where they go when it gives up.
type Delivery struct {
	// Retry is the number of retries before the event is sent to the dead
	// letter sink.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Retry *int32 `json:"retry,omitempty"`

	// BackoffPolicy is how the delay between retries grows.
	// +optional
	BackoffPolicy *BackoffPolicy `json:"backoffPolicy,omitempty"`

	// BackoffDelay is the first retry's delay, such as PT0.5S.
	// +optional
	BackoffDelay *ISO8601Duration `json:"backoffDelay,omitempty"`

	// DeadLetterSink receives the events that could not be delivered.
	// +optional
	DeadLetterSink *Sink `json:"deadLetterSink,omitempty"`
}

// A Sink is where events are sent: an addressable object in the resource's
// namespace, or a URI.
// +kubebuilder:validation:XValidation:rule="has(self.ref) != has(self.uri)",message="exactly one of ref or uri must be set"
type Sink struct {
	// Ref names an addressable object, such as a Knative Service or Broker.
	// +optional
	Ref *SinkReference `json:"ref,omitempty"`

	// URI of the sink, outside the cluster or at one of its Services; not
	// the API server, loopback, link-local or metadata addresses, which
	// Knative's dispatchers would post failed events to. A sink of the
	// resource's namespace is named by Ref.
	// +optional
	URI *ServiceURL `json:"uri,omitempty"`
}

// A SinkReference names an addressable object in the resource's namespace.
type SinkReference struct {
	// APIVersion of the object, such as serving.knative.dev/v1.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9.-]+/)?v[0-9]+((alpha|beta)[0-9]+)?$')",message="must be an API version such as serving.knative.dev/v1"
	APIVersion string `json:"apiVersion"`

	// Kind of the object, such as Service.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Z][A-Za-z0-9]*$')",message="must be a kind such as Service or Broker"
	Kind string `json:"kind"`

	// Name of the object.
	Name DNSSubdomain `json:"name"`
}

// Filters select events by their CloudEvents attributes, such as
// type: com.example.order.created. All must match.
// +kubebuilder:validation:MaxProperties=16
// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z0-9]{1,20}$'))",message="attribute names are CloudEvents attribute names: 1 to 20 lowercase letters or digits"
type Filters map[string]string

// A Trigger subscribes the function to the events of its Broker.
type Trigger struct {
	// Name of the trigger, unique within the resource.
	Name DNSLabel `json:"name"`

	// Filters select the events this trigger delivers. No filters means
	// every event of the Broker.
	// +optional
	Filters Filters `json:"filters,omitempty"`

	// Delivery overrides the resource's delivery spec for this trigger.
	// +optional
	Delivery *Delivery `json:"delivery,omitempty"`

	// Parallelism is how many events a RabbitMQBroker's dispatcher sends
	// to the function at once for this trigger (eventing-rabbitmq's
	// rabbitmq.eventing.knative.dev/parallelism); other Broker classes
	// ignore it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
}

// FunctionEventing wires a LambdaFunction to CloudEvents.
// +kubebuilder:validation:XValidation:rule="!has(self.broker) || !has(self.broker.class) || self.broker.class != 'RabbitMQBroker' || !has(self.triggers) || self.triggers.all(t, has(t.filters) && 'type' in t.filters)",message="every trigger on a RabbitMQ Broker must filter by type: eventing-rabbitmq applies only attribute filters, so a trigger without one would deliver the function's own replies back to it"
type FunctionEventing struct {
	// Broker the triggers subscribe to.
	// +optional
	Broker *Broker `json:"broker,omitempty"`

	// Triggers subscribe the function to events of the Broker.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Triggers []Trigger `json:"triggers,omitempty"`

	// Delivery is the default delivery spec of every trigger.
	// +optional
	Delivery *Delivery `json:"delivery,omitempty"`

	// Schedules invoke the function at the times of cron schedules. Their
	// events, of type dev.knative.sources.ping, go straight to the
	// function, not through the Broker.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Schedules []Schedule `json:"schedules,omitempty"`
}
