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

// An Input configures function-knative-lambda.
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Mode is Direct (compose the Knative objects) or Managed (compose a
	// managed resource).
	// +kubebuilder:default=Direct
	// +optional
	Mode Mode `json:"mode,omitempty"`

	// AllowedSystemNamespaces are system namespaces (crossplane-system,
	// kube-* and knative-*) a legacy composite
	// resource's claim may be in. The objects of a claim go to its
	// namespace; one in a system namespace is refused unless listed here.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	AllowedSystemNamespaces []string `json:"allowedSystemNamespaces,omitempty"`

	// Build are the build settings of Direct mode, as a ProviderConfig's are
	// for managed resources; when set, providerConfigRef's are not read. A
	// composite resource's own build settings win over either.
	// +optional
	Build *v1alpha1.BuildDefaults `json:"build,omitempty"`

	// Eventing are the eventing defaults of Direct mode, as a
	// ProviderConfig's are for managed resources; they win over those of
	// the provider config providerConfigRef names.
	// +optional
	Eventing *v1alpha1.EventingDefaults `json:"eventing,omitempty"`

	// ProviderConfigRef names a ProviderConfig or ClusterProviderConfig of
	// provider-knative-lambda. Direct mode reads its build settings, so a
	// platform sets its registry once; Managed mode gives it to the managed
	// resources it composes. The provider's default when unset.
	// +kubebuilder:validation:XValidation:rule="self.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="kind must be ProviderConfig or ClusterProviderConfig"
	// +optional
	ProviderConfigRef *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`
}
