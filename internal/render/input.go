package render

import (
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// Defaults are the build settings of a ProviderConfig or of the composition
// function's Input. A resource's own build settings win over them.
type Defaults struct {
	// Registry images are pushed to, such as registry.local:5000/lambdas.
	Registry string

	// ExecutorImage is the Kaniko executor image; DefaultExecutorImage
	// when empty.
	ExecutorImage string

	// AllowedExecutorImages a spec may pick besides ExecutorImage.
	AllowedExecutorImages []string

	// GitFetcherImage and S3FetcherImage fetch sources; GitFetcherImage
	// and S3FetcherImage of this package when empty.
	GitFetcherImage, S3FetcherImage string

	// MaxTimeout is the longest build a spec may ask for;
	// DefaultMaxBuildTimeout when zero.
	MaxTimeout time.Duration

	// CacheRepo turns on Kaniko's layer cache; each namespace caches in
	// its own repository below it.
	CacheRepo string

	// Network limits where build pods may connect.
	Network Network

	// PushSecretName is a docker-config Secret used to push images.
	PushSecretName string

	// InsecureRegistries are reached over plain http.
	InsecureRegistries []string

	// BaseImages replace the languages' public base images.
	BaseImages []v1alpha1.BaseImage

	// RegistryMirrors Kaniko pulls base images through.
	RegistryMirrors []string

	// PullSecrets are docker-config Secrets built images are pulled with.
	PullSecrets []v1alpha1.LocalObjectReference

	// DeadLetterSink of the Triggers whose delivery names none.
	DeadLetterSink *v1alpha1.Sink

	// RelayImage runs beside an agent that forwards; DefaultRelayImage
	// when empty.
	RelayImage string

	// MaxForwardHops is the most forwards an event passes through;
	// DefaultMaxForwardHops when zero.
	MaxForwardHops int32
}

// buildEnv is the build environment of a spec's build under these defaults.
func (d Defaults) buildEnv(b *v1alpha1.Build) BuildEnv {
	e := BuildEnv{BaseImages: d.BaseImages}
	if b != nil {
		e.Args = slices.Sorted(maps.Keys(b.BuildArgs))
	}
	return e
}

// WithEventing are the defaults with a provider config's or Input's
// eventing defaults; what they leave unset stays as it was.
func (d Defaults) WithEventing(e *v1alpha1.EventingDefaults) Defaults {
	if e == nil {
		return d
	}
	if e.DeadLetterSink != nil {
		d.DeadLetterSink = e.DeadLetterSink
	}
	if e.RelayImage != nil {
		d.RelayImage = *e.RelayImage
	}
	if e.MaxForwardHops != nil {
		d.MaxForwardHops = *e.MaxForwardHops
	}
	return d
}

// Network is where build pods may connect.
type Network struct {
	// Unrestricted builds get no NetworkPolicy.
	Unrestricted bool
	// ClusterCIDRs are refused; DefaultClusterCIDRs when empty.
	ClusterCIDRs []string
	// Deny are refused too: the networks the provider or function is told
	// to refuse, and the API server's address.
	Deny []string
	// AllowNamespaces and AllowCIDRs may be reached despite ClusterCIDRs.
	AllowNamespaces, AllowCIDRs []string
	// DNSCIDRs are DNS servers besides the cluster DNS's pods;
	// DefaultDNSCIDRs when empty.
	DNSCIDRs []string
}

// BuildDefaults are the Defaults of a ProviderConfig's or a function Input's
// build settings. A timeout that does not parse is left to the default: the
// schema admits only durations.
func BuildDefaults(b *v1alpha1.BuildDefaults) Defaults {
	if b == nil {
		return Defaults{}
	}
	d := Defaults{
		InsecureRegistries: b.InsecureRegistries, AllowedExecutorImages: b.AllowedExecutorImages,
		BaseImages: b.BaseImages, RegistryMirrors: strs(b.RegistryMirrors), PullSecrets: b.PullSecretRefs,
	}
	if b.Registry != nil {
		d.Registry = string(*b.Registry)
	}
	if b.ExecutorImage != nil {
		d.ExecutorImage = *b.ExecutorImage
	}
	if b.GitFetcherImage != nil {
		d.GitFetcherImage = *b.GitFetcherImage
	}
	if b.S3FetcherImage != nil {
		d.S3FetcherImage = *b.S3FetcherImage
	}
	if b.MaxTimeout != nil {
		d.MaxTimeout, _ = time.ParseDuration(string(*b.MaxTimeout))
	}
	if n := b.Network; n != nil {
		d.Network = Network{
			Unrestricted:    n.Policy == v1alpha1.BuildNetworkUnrestricted,
			ClusterCIDRs:    strs(n.ClusterCIDRs),
			AllowNamespaces: strs(n.AllowNamespaces),
			AllowCIDRs:      strs(n.AllowCIDRs),
			DNSCIDRs:        strs(n.DNSCIDRs),
		}
	}
	if b.CacheRepo != nil {
		d.CacheRepo = string(*b.CacheRepo)
	}
	if b.PushSecretRef != nil {
		d.PushSecretName = string(b.PushSecretRef.Name)
	}
	return d
}

// strs converts a list of a string type.
func strs[T ~string](in []T) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

// Observed are facts about the cluster that render cannot know by itself.
type Observed struct {
	// SourceIdentity of a git or S3 source: the commit a git ref resolved to,
	// or a hash of the ETags of every S3 object. Inline sources need none.
	SourceIdentity string

	// Build is the last successful build the caller knows of. Render uses
	// it only when its identity is the current one.
	Build *Pushed

	// ForwardAddresses map a forward target (see ForwardTargetKey) to the
	// address its Broker reports in status.address.url.
	ForwardAddresses map[string]string

	// Refused maps a forward target (see ForwardTargetKey) to why it takes
	// no events from this agent: BrokerTargets' Refused.
	Refused map[string]string

	// Served is whether a Revision of the workload's Knative Service has
	// been ready, so that Knative has given the Service its address: the
	// status names a latest ready Revision.
	Served bool
}

// A Pushed is what a successful build pushed: the image of a build
// identity, by digest.
type Pushed struct {
	Identity string
	Digest   string
}

// A FunctionInput is everything render needs for one LambdaFunction.
type FunctionInput struct {
	Namespace string
	Name      string
	Spec      v1alpha1.LambdaFunctionParameters
	Defaults  Defaults
	Observed  Observed

	// Rebuild is the value of the resource's rebuild annotation: a new value
	// is a new build of the same code.
	Rebuild string
}

// An AgentInput is everything render needs for one LambdaAgent.
type AgentInput struct {
	Namespace string
	Name      string
	Spec      v1alpha1.LambdaAgentParameters
	Defaults  Defaults
	Observed  Observed
}

// Objects are the desired objects of one resource. A nil object is not wanted
// now: a built function has no Service until its image is built, and an image
// source has no build at all.
type Objects struct {
	// BuildIdentity of a built function; empty when nothing is built.
	BuildIdentity string

	// Image the Service runs, or will run once built.
	Image string

	// Pending says what the objects wait for, such as a build or the address
	// of a forward's Broker. Empty when nothing is missing.
	Pending []string

	// Refused says which forwards deliver nothing because their target
	// does not accept them. Their Triggers are not rendered.
	Refused []string

	BuildContext *corev1.ConfigMap
	// BuildNetworkPolicy limits where the build's pods may connect; nil
	// when the defaults say Unrestricted.
	BuildNetworkPolicy *networkingv1.NetworkPolicy
	BuildJob           *batchv1.Job
	Service            *servingv1.Service
	// Relay is the Knative Service an agent's forwards deliver through;
	// nil unless a forward has a target.
	Relay  *servingv1.Service
	Broker *eventingv1.Broker
	// BrokerConfig is the RabbitmqBrokerConfig of a RabbitMQ Broker created
	// here that names a RabbitmqCluster; nil otherwise.
	BrokerConfig *unstructured.Unstructured
	Triggers     []*eventingv1.Trigger
	// Schedules are the PingSources that invoke a function.
	Schedules []*sourcesv1.PingSource

	// serving renders what serves a function once its build is known;
	// nil unless the objects wait for a build.
	serving *serving
}

// Build returns the build's objects in the order they are applied: its
// pods never start before the NetworkPolicy that limits them exists.
func (o *Objects) Build() []kube.Object {
	var all []kube.Object
	if o.BuildContext != nil {
		all = append(all, o.BuildContext)
	}
	if o.BuildNetworkPolicy != nil {
		all = append(all, o.BuildNetworkPolicy)
	}
	if o.BuildJob != nil {
		all = append(all, o.BuildJob)
	}
	return all
}

// Brokers returns the Broker the workload creates, if any, after the
// RabbitmqBrokerConfig it refers to. They are shared with every other
// workload that uses the Broker.
func (o *Objects) Brokers() []kube.Object {
	var all []kube.Object
	if o.BrokerConfig != nil {
		all = append(all, o.BrokerConfig)
	}
	if o.Broker != nil {
		all = append(all, o.Broker)
	}
	return all
}

// Eventing returns the Broker the workload creates, if any, an agent's
// relay, its Triggers and its PingSources: the objects that must deliver
// before it is Ready.
func (o *Objects) Eventing() []kube.Object {
	var all []kube.Object
	if o.Broker != nil {
		all = append(all, o.Broker)
	}
	if o.Relay != nil {
		all = append(all, o.Relay)
	}
	return o.appendDeliveries(all)
}

// UsedBroker is the Broker the workload creates or its Triggers listen on;
// empty when neither.
func (o *Objects) UsedBroker() string {
	if o.Broker != nil {
		return o.Broker.Name
	}
	return o.ListenedBroker()
}

// ListenedBroker is the Broker the workload's Triggers listen on when it
// does not create it; empty when it does, or has no Triggers.
func (o *Objects) ListenedBroker() string {
	if o.Broker != nil || len(o.Triggers) == 0 {
		return ""
	}
	return o.Triggers[0].Spec.Broker
}

// EventingObservation names the workload's Broker, Triggers and
// PingSources, as its status reports them.
func (o *Objects) EventingObservation() *v1alpha1.EventingObservation {
	if o.Broker == nil && len(o.Triggers) == 0 && len(o.Schedules) == 0 {
		return nil
	}
	e := &v1alpha1.EventingObservation{Broker: o.UsedBroker()}
	if o.Broker != nil {
		e.CreatedBrokers = []string{o.Broker.Name}
	}
	for _, t := range o.Triggers {
		e.Triggers = append(e.Triggers, t.Name)
	}
	for _, p := range o.Schedules {
		e.Schedules = append(e.Schedules, p.Name)
	}
	return e
}

// All returns the wanted objects in the order they are applied.
func (o *Objects) All() []kube.Object {
	all := append(o.Build(), o.Brokers()...)
	if o.Service != nil {
		all = append(all, o.Service)
	}
	if o.Relay != nil {
		all = append(all, o.Relay)
	}
	return o.appendDeliveries(all)
}

// appendDeliveries appends what delivers events to the Service: its
// Triggers, then its PingSources.
func (o *Objects) appendDeliveries(all []kube.Object) []kube.Object {
	for _, t := range o.Triggers {
		all = append(all, t)
	}
	for _, s := range o.Schedules {
		all = append(all, s)
	}
	return all
}
