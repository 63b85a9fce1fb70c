package v1beta1

import "k8s.io/apimachinery/pkg/runtime/schema"

// Package type metadata.
const (
	Group   = "fn.lambda.crossplane.io"
	Version = "v1beta1"
)

// SchemeGroupVersion is the group version of the Input.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}
