package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Package type metadata.
const (
	Group   = "platform.lambda.crossplane.io"
	Version = "v1alpha1"
)

// SchemeGroupVersion is the group version of this API.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Kinds of the platform API. Lambda and Agent are namespaced (Crossplane v2)
// XRs; XLambda and XAgent are their cluster-scoped legacy twins, claimed by
// LambdaClaim and AgentClaim. Twins share one schema.
var (
	LambdaKind      = reflect.TypeFor[Lambda]().Name()
	AgentKind       = reflect.TypeFor[Agent]().Name()
	XLambdaKind     = "X" + LambdaKind
	XAgentKind      = "X" + AgentKind
	LambdaClaimKind = LambdaKind + "Claim"
	AgentClaimKind  = AgentKind + "Claim"
)
