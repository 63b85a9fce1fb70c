// Package v1 is the wire form of Knative Serving's serving.knative.dev/v1
// Service and Revision, as the provider and the function write and read them.
// +kubebuilder:object:generate=true
// +groupName=serving.knative.dev
package v1
