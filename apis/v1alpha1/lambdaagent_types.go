package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// An AIProvider is the kind of LLM API an agent talks to.
// +kubebuilder:validation:Enum=ollama;openai;anthropic;azure-openai;vllm;gemini
type AIProvider string

// AI providers.
const (
	AIProviderOllama      AIProvider = "ollama"
	AIProviderOpenAI      AIProvider = "openai"
	AIProviderAnthropic   AIProvider = "anthropic"
	AIProviderAzureOpenAI AIProvider = "azure-openai"
	AIProviderVLLM        AIProvider = "vllm"
	AIProviderGemini      AIProvider = "gemini"
)

// AgentImage is the prebuilt image of an agent.
// +kubebuilder:validation:XValidation:rule="has(self.tag) != has(self.digest)",message="exactly one of tag or digest must be set"
type AgentImage struct {
	// Repository of the image, such as ghcr.io/acme/agent.
	Repository ImageRepository `json:"repository"`

	// Tag of the image.
	// +optional
	Tag *ImageTag `json:"tag,omitempty"`

	// Digest of the image.
	// +optional
	Digest *ImageDigest `json:"digest,omitempty"`

	// PullSecrets name docker-config Secrets in the resource's namespace.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PullSecrets []LocalObjectReference `json:"pullSecrets,omitempty"`

	// Port the agent listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:validation:XValidation:rule="!(self in [8012, 8013, 8022, 9090, 9091])",message="ports 8012, 8013, 8022, 9090 and 9091 are reserved by Knative's queue-proxy"
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`

	// ReadinessPath is an HTTP path the agent answers 2xx on once it is
	// ready, such as /healthz. Without it, Knative deems the agent ready
	// when its port accepts connections, which an agent still loading its
	// model may already do.
	// +optional
	ReadinessPath *HTTPPath `json:"readinessPath,omitempty"`

	// Command overrides the image's entrypoint.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Command []string `json:"command,omitempty"`

	// Args overrides the image's arguments.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Args []string `json:"args,omitempty"`
}

// AI configures the LLM an agent uses.
// +kubebuilder:validation:XValidation:rule="self.provider in ['ollama', 'vllm'] || has(self.apiKeySecretRef)",message="apiKeySecretRef is required for hosted providers (openai, anthropic, azure-openai, gemini)"
// +kubebuilder:validation:XValidation:rule="!(self.provider in ['ollama', 'vllm', 'azure-openai']) || has(self.endpoint)",message="endpoint is required for ollama, vllm and azure-openai"
type AI struct {
	// Provider of the LLM API.
	Provider AIProvider `json:"provider"`

	// Endpoint of the LLM API, such as http://ollama.ai.svc:11434.
	// +optional
	Endpoint *HTTPURL `json:"endpoint,omitempty"`

	// Model name, such as llama3.2:3b or gpt-4o-mini.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9._:/@-]*$')",message="must be a model name such as llama3.2:3b: letters, digits and . _ : / @ -"
	Model string `json:"model"`

	// Temperature of sampling, from 0 to 2, as a decimal string such as "0.7".
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]([.][0-9]+)?$') && double(self) <= 2.0",message="must be a number from 0 to 2, such as \"0.7\""
	// +optional
	Temperature *string `json:"temperature,omitempty"`

	// MaxTokens is the most tokens one completion may produce.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	// +optional
	MaxTokens *int32 `json:"maxTokens,omitempty"`

	// SystemPrompt is the agent's instructions.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	SystemPrompt *string `json:"systemPrompt,omitempty"`

	// MaxContextMessages is how many past messages the agent keeps.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxContextMessages *int32 `json:"maxContextMessages,omitempty"`

	// APIKeySecretRef selects the API key in a Secret of the resource's
	// namespace.
	// +optional
	APIKeySecretRef *KeySelector `json:"apiKeySecretRef,omitempty"`
}

// A Subscription delivers events of one type to the agent.
type Subscription struct {
	// Name of the subscription, unique within the agent. It names the Trigger.
	Name DNSLabel `json:"name"`

	// EventType is the CloudEvents type, such as com.example.ticket.opened.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9._:/-]*$')",message="must be a CloudEvents type such as com.example.ticket.opened"
	EventType string `json:"eventType"`

	// Source limits the subscription to events of this CloudEvents source.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Source *string `json:"source,omitempty"`

	// Filters are further attribute filters.
	// +optional
	Filters Filters `json:"filters,omitempty"`

	// Delivery overrides the agent's delivery spec for this subscription.
	// +optional
	Delivery *Delivery `json:"delivery,omitempty"`

	// Parallelism is how many events a RabbitMQBroker's dispatcher sends
	// to the agent at once for this subscription (eventing-rabbitmq's
	// rabbitmq.eventing.knative.dev/parallelism); other Broker classes
	// ignore it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
}

// A ForwardTarget is where forwarded events go: another agent's Broker, or a
// Broker by name. Exactly one is set.
// +kubebuilder:validation:XValidation:rule="has(self.agent) != has(self.broker)",message="exactly one of agent or broker must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.namespace) || has(self.agent)",message="namespace goes with agent: a Broker is named in the agent's own namespace"
type ForwardTarget struct {
	// Agent names a LambdaAgent, in the same namespace unless Namespace
	// says otherwise; events go to its Broker.
	// +optional
	Agent *DNSLabel `json:"agent,omitempty"`

	// Namespace of the target agent, when it is not this agent's. The
	// target agent must accept this agent's namespace in its
	// eventing.acceptFrom; until it does, and as soon as it stops, the
	// forward delivers nothing.
	// +optional
	Namespace *DNSLabel `json:"namespace,omitempty"`

	// Broker names a Broker in the same namespace.
	// +optional
	Broker *DNSLabel `json:"broker,omitempty"`
}

// An Intent is the value of the intent CloudEvents extension attribute an
// agent routes on, such as refund-request.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be an intent name: lowercase letters, digits and '-', starting and ending with a letter or digit"
type Intent string

// A Forward sends events of the agent's Broker on to another Broker.
// +kubebuilder:validation:XValidation:rule="has(self.eventTypes) || has(self.intents)",message="a forward selects events by eventTypes, intents or both"
type Forward struct {
	// Name of the forward, unique within the agent. It names the Trigger.
	Name DNSLabel `json:"name"`

	// EventTypes are the CloudEvents types forwarded; one Trigger each.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	EventTypes []string `json:"eventTypes,omitempty"`

	// Intents forward the events whose intent extension attribute is one
	// of them. With EventTypes too, an event must match a type and an
	// intent; one Trigger for each pair.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Intents []Intent `json:"intents,omitempty"`

	// Target of the forwarded events.
	Target ForwardTarget `json:"target"`
}

// AgentEventing wires a LambdaAgent to CloudEvents.
// +kubebuilder:validation:XValidation:rule="!has(self.forwards) || self.forwards.all(f, !has(f.target.broker) || f.target.broker != (has(self.broker) && has(self.broker.name) ? self.broker.name : 'default'))",message="a forward may not send events into the Broker the agent listens on: every event it forwards would reach it again"
// +kubebuilder:validation:XValidation:rule="!has(self.forwards) || self.forwards.map(f, (has(f.eventTypes) ? size(f.eventTypes) : 1) * (has(f.intents) ? size(f.intents) : 1)).sum() <= 64",message="forwards render one Trigger for each event type and intent pair of each forward: at most 64 in all"
type AgentEventing struct {
	// Broker the agent's subscriptions and forwards listen on.
	// +optional
	Broker *Broker `json:"broker,omitempty"`

	// Subscriptions deliver events to the agent.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Subscriptions []Subscription `json:"subscriptions,omitempty"`

	// Forwards send events on to other agents or Brokers.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Forwards []Forward `json:"forwards,omitempty"`

	// Delivery is the default delivery spec of every subscription.
	// +optional
	Delivery *Delivery `json:"delivery,omitempty"`

	// EmitEvents lets the agent publish its replies as events to the Broker.
	// +optional
	EmitEvents *bool `json:"emitEvents,omitempty"`

	// Intents the agent handles: events whose intent extension attribute
	// (a CloudEvents extension, such as intent: refund-request) is one of
	// them are delivered to the agent, whatever their type; one Trigger
	// each.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Intents []Intent `json:"intents,omitempty"`

	// AcceptFrom names the other namespaces whose agents may forward events
	// to this agent's Broker. Agents of its own namespace always may.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	AcceptFrom []DNSLabel `json:"acceptFrom,omitempty"`
}

// Observability configures the agent's telemetry.
type Observability struct {
	// Metrics exposes Prometheus metrics from the agent.
	// +optional
	Metrics *bool `json:"metrics,omitempty"`

	// TracingEndpoint is the OTLP endpoint traces are exported to.
	// +optional
	TracingEndpoint *HTTPURL `json:"tracingEndpoint,omitempty"`
}

// LambdaAgentParameters are the configurable fields of a LambdaAgent.
// The platform API's composite resources use the same struct as their spec.
// +kubebuilder:validation:XValidation:rule="!has(self.eventing) || (!has(self.eventing.subscriptions) && !has(self.eventing.forwards)) || (has(self.eventing.subscriptions) ? self.eventing.subscriptions.map(s, s.name) : []).all(n, !(has(self.eventing.forwards) ? self.eventing.forwards.map(f, f.name) : []).exists(m, m == n))",message="subscription and forward names share the agent's Trigger names and must differ"
type LambdaAgentParameters struct {
	// Image of the agent.
	Image AgentImage `json:"image"`

	// AI configures the agent's LLM.
	AI AI `json:"ai"`

	// TimeoutSeconds is the longest one request to the agent may take,
	// model calls included. Knative's default applies when unset, and
	// Knative refuses more than its max-revision-timeout-seconds (600
	// unless the cluster raised it).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`

	// Eventing subscribes the agent to events and forwards events on.
	// +optional
	Eventing *AgentEventing `json:"eventing,omitempty"`

	// Scaling of the agent. Agents are kept warm: minReplicas defaults to 1.
	// +optional
	Scaling *Scaling `json:"scaling,omitempty"`

	// Resources of the agent's container.
	// +optional
	Resources *Resources `json:"resources,omitempty"`

	// Env are further environment variables of the agent.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []EnvVar `json:"env,omitempty"`

	// EnvFrom sets a variable for each key of a whole Secret or ConfigMap.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	EnvFrom []EnvFromSource `json:"envFrom,omitempty"`

	// Volumes mount Secrets and ConfigMaps as read-only files of the
	// agent's container. A missing one holds the agent, as a missing
	// Secret of env does, unless it is optional.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=path
	// +optional
	Volumes []Volume `json:"volumes,omitempty"`

	// Observability configures metrics and tracing.
	// +optional
	Observability *Observability `json:"observability,omitempty"`

	// ServiceAccountName the agent's pods run as.
	// +optional
	ServiceAccountName *DNSSubdomain `json:"serviceAccountName,omitempty"`

	// Workload are labels and annotations of the Knative Service.
	// +optional
	Workload *WorkloadSettings `json:"workload,omitempty"`

	// Traffic splits requests between the latest Revision and pinned ones,
	// and paces rollouts.
	// +optional
	Traffic *Traffic `json:"traffic,omitempty"`
}

// A LambdaAgentSpec defines the desired state of a LambdaAgent.
type LambdaAgentSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`

	ForProvider LambdaAgentParameters `json:"forProvider"`
}

// A LambdaAgentStatus is the observed state of a LambdaAgent.
type LambdaAgentStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	AtProvider WorkloadObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A LambdaAgent is a prebuilt AI agent image served by Knative, with its LLM
// settings, event subscriptions and forwards.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.atProvider.phase"
// +kubebuilder:printcolumn:name="URL",type="string",JSONPath=".status.atProvider.url"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,knative-lambda},shortName=la
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 40",message="metadata.name must be a DNS-1035 label of at most 40 characters: it names the Knative Service"
type LambdaAgent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LambdaAgentSpec   `json:"spec"`
	Status LambdaAgentStatus `json:"status,omitempty"`
}
