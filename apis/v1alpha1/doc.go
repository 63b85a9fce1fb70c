// Package v1alpha1 contains the lambda.m.crossplane.io v1alpha1 API: the
// LambdaFunction and LambdaAgent managed resources and the provider configs
// that point them at a cluster.
// +kubebuilder:object:generate=true
// +groupName=lambda.m.crossplane.io
// +versionName=v1alpha1
package v1alpha1
