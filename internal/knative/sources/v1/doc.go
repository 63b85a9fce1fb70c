// Package v1 is the wire form of Knative Eventing's sources.knative.dev/v1
// PingSource, as the provider and the function write and read it.
// +kubebuilder:object:generate=true
// +groupName=sources.knative.dev
package v1
