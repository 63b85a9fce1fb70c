package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A Mode is how the function realises a composite resource.
// +kubebuilder:validation:Enum=Direct;Managed
type Mode string

// Modes.
const (
	// ModeDirect composes the Knative Service, Broker, Triggers and the build
	// Job and its ConfigMap themselves, in the cluster Crossplane runs in.
	ModeDirect Mode = "Direct"

	// ModeManaged composes one LambdaFunction or LambdaAgent managed resource,
	// which provider-knative-lambda realises, possibly in another cluster.
	ModeManaged Mode = "Managed"
)

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
// +kubebuilder:validation:XValidation:rule="self.mode != 'Direct' || !has(self.providerConfigRef)",message="providerConfigRef belongs to Managed mode: Direct mode composes Knative objects itself"

// An Input configures function-knative-lambda.
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Mode is Direct (compose the Knative objects) or Managed (compose a
	// managed resource).
	// +kubebuilder:default=Direct
	// +optional
	Mode Mode `json:"mode,omitempty"`

	// Build are the build settings of Direct mode, as a ProviderConfig's are
	// for managed resources. A composite resource's own build settings win.
	// +optional
	Build *v1alpha1.BuildDefaults `json:"build,omitempty"`

	// ProviderConfigRef is the provider config of the managed resources that
	// Managed mode composes. The provider's default when unset.
	// +optional
	ProviderConfigRef *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`
}
