// Package lists holds the lists of v1alpha1's managed resources and of their
// provider config usages. Their generated GetItems methods return
// crossplane-runtime's resource interfaces, which link controller-runtime's
// client and client-go; kept apart from their kinds, v1alpha1 stays light
// enough for the composition function, which links it and talks only gRPC.
// +kubebuilder:object:generate=true
package lists

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/scheme"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// SchemeBuilder registers the lists with a scheme, in v1alpha1's group
// version.
var SchemeBuilder = &scheme.Builder{GroupVersion: v1alpha1.SchemeGroupVersion} //nolint:staticcheck // As v1alpha1's own.

func init() {
	SchemeBuilder.Register(&LambdaFunctionList{}, &LambdaAgentList{}, &ProviderConfigUsageList{})
}

// +kubebuilder:object:root=true

// LambdaFunctionList contains a list of v1alpha1.LambdaFunction.
type LambdaFunctionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []v1alpha1.LambdaFunction `json:"items"`
}

// +kubebuilder:object:root=true

// LambdaAgentList contains a list of v1alpha1.LambdaAgent.
type LambdaAgentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []v1alpha1.LambdaAgent `json:"items"`
}

// +kubebuilder:object:root=true

// ProviderConfigUsageList contains a list of v1alpha1.ProviderConfigUsage.
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []v1alpha1.ProviderConfigUsage `json:"items"`
}
