package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A Metric is what Knative's autoscaler scales on.
// +kubebuilder:validation:Enum=concurrency;rps;cpu;memory
type Metric string

// Autoscaling metrics. Concurrency and rps use Knative's own autoscaler (KPA),
// cpu and memory the Kubernetes HPA.
const (
	MetricConcurrency Metric = "concurrency"
	MetricRPS         Metric = "rps"
	MetricCPU         Metric = "cpu"
	MetricMemory      Metric = "memory"
)

// Scaling configures Knative autoscaling of the workload.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.maxReplicas == 0 || self.minReplicas <= self.maxReplicas",message="minReplicas must not be greater than maxReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.metric) || !(self.metric in ['cpu', 'memory']) || !has(self.minReplicas) || self.minReplicas >= 1",message="metric cpu and memory scale with the Kubernetes HPA, which cannot scale to zero: set minReplicas to at least 1"
type Scaling struct {
	// MinReplicas is the lowest number of replicas. 0 lets the workload scale
	// to zero when idle.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the highest number of replicas; 0 means no limit.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// TargetConcurrency is the autoscaler's target per replica, in the unit of
	// Metric (concurrent requests, requests per second, or percent of the
	// request for cpu and memory).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	TargetConcurrency *int32 `json:"targetConcurrency,omitempty"`

	// ContainerConcurrency is the hard limit of requests one replica serves
	// at a time; 0 means no limit.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	ContainerConcurrency *int64 `json:"containerConcurrency,omitempty"`

	// ScaleToZeroGracePeriod is how long the last replica is kept after
	// traffic stops before scaling to zero.
	// +optional
	ScaleToZeroGracePeriod *GoDuration `json:"scaleToZeroGracePeriod,omitempty"`

	// Window is Knative's stable autoscaling window for the concurrency and
	// rps metrics: the time over which the autoscaler averages the load, so
	// also how long a workload is idle before it may scale to zero. 6s to 1h
	// in whole seconds; Knative's default, 60s, when unset.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+[hms])+$')",message="must be whole seconds, minutes or hours, such as 90s or 1m30s, as Knative requires"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+[hms])+$') || (duration(self) >= duration('6s') && duration(self) <= duration('1h'))",message="must be from 6s to 1h, Knative's bounds"
	// +optional
	Window *GoDuration `json:"window,omitempty"`

	// Metric is what the autoscaler scales on.
	// +kubebuilder:default=concurrency
	// +optional
	Metric Metric `json:"metric,omitempty"`
}

// Resources are the compute resources of the workload container.
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ['cpu', 'memory'].all(r, !(r in self.requests) || !(r in self.limits) || quantity(string(self.limits[r])).compareTo(quantity(string(self.requests[r]))) >= 0)",message="the cpu and memory limits must be at least their requests"
type Resources struct {
	// Requests are the resources the scheduler reserves, such as cpu: 100m.
	// +optional
	Requests ResourceList `json:"requests,omitempty"`

	// Limits are the most the container may use, such as memory: 256Mi.
	// +optional
	Limits ResourceList `json:"limits,omitempty"`
}

// A ResourceList maps resource names, such as cpu, memory or nvidia.com/gpu,
// to quantities. It converts directly to a corev1.ResourceList.
// +kubebuilder:validation:MaxProperties=8
type ResourceList map[corev1.ResourceName]resource.Quantity

// An EnvVar is an environment variable of the workload. Secret values are
// only ever referenced, never written inline.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.valueFrom)",message="exactly one of value or valueFrom must be set"
type EnvVar struct {
	// Name of the variable. PORT and the K_ variables are set by Knative.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="must be a C identifier: letters, digits and '_', not starting with a digit"
	// +kubebuilder:validation:XValidation:rule="!(self in ['PORT', 'K_SERVICE', 'K_CONFIGURATION', 'K_REVISION'])",message="PORT, K_SERVICE, K_CONFIGURATION and K_REVISION are set by Knative"
	Name string `json:"name"`

	// Value of the variable.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Value *string `json:"value,omitempty"`

	// ValueFrom takes the value from a key of a Secret or ConfigMap in the
	// resource's namespace.
	// +optional
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// An EnvVarSource names the Secret or ConfigMap key a variable is read from.
// +kubebuilder:validation:XValidation:rule="has(self.secretKeyRef) != has(self.configMapKeyRef)",message="exactly one of secretKeyRef or configMapKeyRef must be set"
type EnvVarSource struct {
	// SecretKeyRef selects a key of a Secret.
	// +optional
	SecretKeyRef *KeySelector `json:"secretKeyRef,omitempty"`

	// ConfigMapKeyRef selects a key of a ConfigMap.
	// +optional
	ConfigMapKeyRef *KeySelector `json:"configMapKeyRef,omitempty"`
}

// An EnvFromSource sets a variable for each key of a whole Secret or
// ConfigMap of the resource's own namespace. Variables of env, and those the
// provider and Knative set, win over a key of the same name.
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) != has(self.configMapRef)",message="exactly one of secretRef or configMapRef must be set"
type EnvFromSource struct {
	// Prefix put before each key's name, such as DB_.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*$')",message="must start a C identifier: letters, digits and '_', not starting with a digit"
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// SecretRef names the Secret.
	// +optional
	SecretRef *ObjectSelector `json:"secretRef,omitempty"`

	// ConfigMapRef names the ConfigMap.
	// +optional
	ConfigMapRef *ObjectSelector `json:"configMapRef,omitempty"`
}

// An ObjectSelector names a whole Secret or ConfigMap in the resource's own
// namespace.
type ObjectSelector struct {
	// Name of the Secret or ConfigMap.
	Name DNSSubdomain `json:"name"`

	// Optional lets the workload start when it is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// A KeySelector selects a key of a Secret or ConfigMap in the resource's own
// namespace: a resource can never reach into another namespace.
type KeySelector struct {
	// Name of the Secret or ConfigMap.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be a Kubernetes object name"
	Name string `json:"name"`

	// Key within it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must consist of letters, digits, '-', '_' or '.'"
	Key string `json:"key"`

	// Optional lets the workload start when the key is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// A LocalObjectReference names an object in the resource's own namespace.
type LocalObjectReference struct {
	// Name of the object.
	Name DNSSubdomain `json:"name"`
}

// A DNSSubdomain is a Kubernetes object name.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be a Kubernetes object name: lowercase letters, digits, '-' and '.'"
type DNSSubdomain string

// WorkloadSettings are where the workload's URL answers, and the labels
// and annotations added to its Knative Service and its pods.
type WorkloadSettings struct {
	// Visibility is where the workload's URL answers: public, through the
	// cluster's ingress (the default), or cluster-local, only inside the
	// cluster at <name>.<namespace>.svc.cluster.local, off the ingress.
	// +kubebuilder:validation:Enum=public;cluster-local
	// +optional
	Visibility *Visibility `json:"visibility,omitempty"`

	// Labels added to the workload. Keys under knative.dev, serving.knative.dev
	// and lambda.m.crossplane.io are reserved, and so is
	// app.kubernetes.io/managed-by: the provider caches the pods that carry
	// its value.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.contains('knative.dev/') && !k.startsWith('lambda.m.crossplane.io/') && k != 'app.kubernetes.io/managed-by')",message="keys under knative.dev and lambda.m.crossplane.io, and app.kubernetes.io/managed-by, are reserved"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations added to the workload. Autoscaling and other Knative
	// annotations come from the typed fields, so keys under knative.dev are
	// reserved.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.contains('knative.dev/') && !k.startsWith('lambda.m.crossplane.io/'))",message="keys under knative.dev and lambda.m.crossplane.io are reserved: use the typed scaling and eventing fields"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// A Visibility is where a workload's URL answers.
type Visibility string

// Visibilities.
const (
	// VisibilityPublic answers through the cluster's ingress.
	VisibilityPublic Visibility = "public"
	// VisibilityClusterLocal answers only inside the cluster, as Knative's
	// cluster-local visibility label does.
	VisibilityClusterLocal Visibility = "cluster-local"
)
