package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// AnnotationRebuild on a LambdaFunction forces a new build of the same code
// whenever its value changes, such as after a failure outside the code (a
// registry that was down). Its value takes part in the build identity.
const AnnotationRebuild = Group + "/rebuild"

// LambdaFunctionParameters are the configurable fields of a LambdaFunction.
// The platform API's composite resources use the same struct as their spec.
// +kubebuilder:validation:XValidation:rule="has(self.source.image) || (has(self.runtime) && has(self.runtime.language))",message="runtime.language is required unless source.image is set"
// +kubebuilder:validation:XValidation:rule="!has(self.source.image) || !has(self.build)",message="build must not be set for an image source: nothing is built"
// +kubebuilder:validation:XValidation:rule="!has(self.source.image) || !has(self.runtime) || (!has(self.runtime.language) && !has(self.runtime.version) && !has(self.runtime.handler) && !has(self.runtime.maxRequestBody) && !has(self.runtime.logLevel))",message="an image source takes only runtime.port: language, version, handler, maxRequestBody and logLevel belong to built sources"
type LambdaFunctionParameters struct {
	// Source of the function's code.
	Source FunctionSource `json:"source"`

	// Runtime the code is built for and served with.
	// +optional
	Runtime *Runtime `json:"runtime,omitempty"`

	// Scaling of the Knative Service.
	// +optional
	Scaling *Scaling `json:"scaling,omitempty"`

	// Resources of the function's container.
	// +optional
	Resources *Resources `json:"resources,omitempty"`

	// Env are environment variables of the function.
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
	// function's container. A missing one holds the function, as a missing
	// Secret of env does, unless it is optional.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=path
	// +optional
	Volumes []Volume `json:"volumes,omitempty"`

	// TimeoutSeconds is the longest a request may take.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`

	// Eventing subscribes the function to CloudEvents.
	// +optional
	Eventing *FunctionEventing `json:"eventing,omitempty"`

	// Build configures the image build of inline, s3 and git sources.
	// +optional
	Build *Build `json:"build,omitempty"`

	// ServiceAccountName the function's pods run as.
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

// A LambdaFunctionSpec defines the desired state of a LambdaFunction.
type LambdaFunctionSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`

	ForProvider LambdaFunctionParameters `json:"forProvider"`
}

// A LambdaFunctionStatus is the observed state of a LambdaFunction.
type LambdaFunctionStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	AtProvider LambdaFunctionObservation `json:"atProvider,omitempty"`
}

// LambdaFunctionObservation is what the provider observed of a function.
type LambdaFunctionObservation struct {
	WorkloadObservation `json:",inline"`

	// Build is the latest build of the function's code.
	// +optional
	Build *BuildObservation `json:"build,omitempty"`
}

// +kubebuilder:object:root=true

// A LambdaFunction is code built into an image and served by Knative,
// subscribed to CloudEvents through a Broker.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.atProvider.phase"
// +kubebuilder:printcolumn:name="URL",type="string",JSONPath=".status.atProvider.url"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,knative-lambda},shortName=lf
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 40",message="metadata.name must be a DNS-1035 label of at most 40 characters: it names the Knative Service and its build Jobs"
type LambdaFunction struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LambdaFunctionSpec   `json:"spec"`
	Status LambdaFunctionStatus `json:"status,omitempty"`
}
