package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// An AgentSpec is what an application team asks of an agent: the same
// parameters as a LambdaAgent's forProvider.
type AgentSpec struct {
	v1alpha1.LambdaAgentParameters `json:",inline"`
}

// An AgentStatus is what the composition function reports of an agent.
type AgentStatus struct {
	v1alpha1.WorkloadObservation `json:",inline"`

	// ObservedGeneration is the generation of the spec the function last
	// acted on, for kstatus and Flux: a namespaced XR's own, or on a claim's
	// composite the claim's, which the claim shows with the rest of the
	// status.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agents,scope=Namespaced,categories={knative-lambda}
// The name rule of the managed resources, for the XRs and claims offered in
// their place. A legacy XR is named after its claim with Crossplane's
// six-character suffix, and its objects after the claim.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= (self.kind.startsWith('X') ? 46 : 40)",message="metadata.name must be a DNS-1035 label of at most 40 characters: it names the Knative Service and its build Jobs"

// An Agent is an AI agent as a composite resource.
type Agent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AgentSpec   `json:"spec"`
	Status AgentStatus `json:"status,omitempty"`
}
