// Package v1 is the wire form of Knative Eventing's eventing.knative.dev/v1
// Broker and Trigger, as the provider and the function write and read them.
// +kubebuilder:object:generate=true
// +groupName=eventing.knative.dev
package v1
