package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "lambda.m.crossplane.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version of this API.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion} //nolint:staticcheck // What crossplane-runtime's generated code and every provider register with.
)

// Kind metadata of every type in this API.
var (
	LambdaFunctionKind             = reflect.TypeFor[LambdaFunction]().Name()
	LambdaFunctionGroupVersionKind = SchemeGroupVersion.WithKind(LambdaFunctionKind)

	LambdaAgentKind             = reflect.TypeFor[LambdaAgent]().Name()
	LambdaAgentGroupVersionKind = SchemeGroupVersion.WithKind(LambdaAgentKind)

	ProviderConfigKind             = reflect.TypeFor[ProviderConfig]().Name()
	ProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigKind)

	ClusterProviderConfigKind             = reflect.TypeFor[ClusterProviderConfig]().Name()
	ClusterProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind(ClusterProviderConfigKind)

	ProviderConfigUsageKind             = reflect.TypeFor[ProviderConfigUsage]().Name()
	ProviderConfigUsageGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigUsageKind)
)

func init() {
	SchemeBuilder.Register(
		&LambdaFunction{},
		&LambdaAgent{},
		&ProviderConfig{}, &ProviderConfigList{},
		&ClusterProviderConfig{}, &ClusterProviderConfigList{},
		&ProviderConfigUsage{},
	)
}
