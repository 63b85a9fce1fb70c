package render

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// Defaults are the build settings of a ProviderConfig or of the composition
// function's Input. A resource's own build settings win over them.
type Defaults struct {
	// Registry images are pushed to, such as registry.local:5000/lambdas.
	Registry string

	// ExecutorImage is the Kaniko executor image; DefaultExecutorImage
	// when empty.
	ExecutorImage string

	// CacheRepo turns on Kaniko's layer cache in this repository.
	CacheRepo string

	// PushSecretName is a docker-config Secret used to push images.
	PushSecretName string

	// InsecureRegistries are reached over plain http.
	InsecureRegistries []string
}

// BuildDefaults are the Defaults of a ProviderConfig's or a function Input's
// build settings.
func BuildDefaults(b *v1alpha1.BuildDefaults) Defaults {
	if b == nil {
		return Defaults{}
	}
	d := Defaults{InsecureRegistries: b.InsecureRegistries}
	if b.Registry != nil {
		d.Registry = string(*b.Registry)
	}
	if b.ExecutorImage != nil {
		d.ExecutorImage = *b.ExecutorImage
	}
	if b.CacheRepo != nil {
		d.CacheRepo = string(*b.CacheRepo)
	}
	if b.PushSecretRef != nil {
		d.PushSecretName = string(b.PushSecretRef.Name)
	}
	return d
}

// Observed are facts about the cluster that render cannot know by itself.
type Observed struct {
	// SourceIdentity of a git or S3 source: the commit a git ref resolved to,
	// or a hash of the ETags of every S3 object. Inline sources need none.
	SourceIdentity string

	// Build is the last successful build the caller knows of. Render uses
	// it only when its identity is the current one.
	Build *Build

	// ForwardAddresses map a forward target (see ForwardTargetKey) to the
	// address its Broker reports in status.address.url.
	ForwardAddresses map[string]string
}

// A Build is the outcome of a successful build.
type Build struct {
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

	BuildContext *corev1.ConfigMap
	BuildJob     *batchv1.Job
	Service      *servingv1.Service
	Broker       *eventingv1.Broker
	Triggers     []*eventingv1.Trigger
}

// All returns the wanted objects in the order they are applied.
func (o *Objects) All() []client.Object {
	var all []client.Object
	if o.BuildContext != nil {
		all = append(all, o.BuildContext)
	}
	if o.BuildJob != nil {
		all = append(all, o.BuildJob)
	}
	if o.Broker != nil {
		all = append(all, o.Broker)
	}
	if o.Service != nil {
		all = append(all, o.Service)
	}
	for _, t := range o.Triggers {
		all = append(all, t)
	}
	return all
}
