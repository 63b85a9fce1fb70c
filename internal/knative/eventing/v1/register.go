package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// SchemeGroupVersion is Knative Eventing's eventing.knative.dev/v1.
	SchemeGroupVersion = schema.GroupVersion{Group: "eventing.knative.dev", Version: "v1"}

	// SchemeBuilder registers Broker and Trigger with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion} //nolint:staticcheck // As the provider's own API registers.

	// AddToScheme adds Broker and Trigger to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Broker{}, &BrokerList{}, &Trigger{}, &TriggerList{})
}
