// Package v1alpha1 contains the platform API that the configuration package
// offers application teams: composite resources for functions and agents,
// whose specs are the managed resources' parameters. Their CRDs are the
// source of the generated XRDs; no controller serves these types directly.
// +kubebuilder:object:generate=true
// +groupName=platform.lambda.crossplane.io
// +versionName=v1alpha1
package v1alpha1
