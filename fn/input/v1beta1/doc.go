// Package v1beta1 contains the input of function-knative-lambda: how a
// Composition's pipeline step realises a Lambda or Agent composite resource.
// +kubebuilder:object:generate=true
// +groupName=fn.lambda.crossplane.io
// +versionName=v1beta1
package v1beta1
