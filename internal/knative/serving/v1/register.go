package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// SchemeGroupVersion is Knative Serving's serving.knative.dev/v1.
	SchemeGroupVersion = schema.GroupVersion{Group: "serving.knative.dev", Version: "v1"}

	// SchemeBuilder registers Service and Revision with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion} //nolint:staticcheck // As the provider's own API registers.

	// AddToScheme adds Service and Revision to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Service{}, &ServiceList{}, &Revision{}, &RevisionList{})
}
