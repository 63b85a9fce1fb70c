package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
)

// Labels Crossplane sets on a legacy composite resource made for a claim.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

const (
	errDecodeXR    = "cannot decode the composite resource"
	errFmtNoClaim  = "%s %s is cluster scoped and has no claim: its objects go to the claim's namespace, so create a %s instead"
	errFmtNoObject = "cannot read the observed %s"
)

// A composite is the composite resource a pass works for, and where and as
// what its objects are named.
type composite struct {
	kind  string
	agent bool

	// namespace is the XR's own, or its claim's for a legacy XR.
	namespace string

	// name is the claim's for a legacy XR, whose own name has a random
	// suffix: application teams expect their Service named as they named it.
	name string

	// generation of a namespaced XR's spec; 0 for a legacy XR, whose claim
	// counts its own generations.
	generation int64

	lambdaXR v1alpha1.Lambda
	agentXR  v1alpha1.Agent
}

// compositeOf reads which workload a composite resource asks for.
func compositeOf(xr *resource.Composite) (composite, error) {
	u := xr.Resource
	c := composite{kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName()}
	var into runtime.Object
	switch c.kind {
	case v1alpha1.LambdaKind, v1alpha1.XLambdaKind:
		into = &c.lambdaXR
	case v1alpha1.AgentKind, v1alpha1.XAgentKind:
		c.agent, into = true, &c.agentXR
	default:
		return c, errors.Errorf(errFmtNoKind, c.kind)
	}
	if c.namespace == "" {
		l := u.GetLabels()
		if l[labelClaimNamespace] == "" {
			return c, errors.Errorf(errFmtNoClaim, c.kind, c.name, claimKind(c))
		}
		c.namespace, c.name = l[labelClaimNamespace], l[labelClaimName]
	}
	// Crossplane's own spec fields (compositionRef, claimRef and the like)
	// are not ours and are left out.
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return c, errors.Wrap(err, errDecodeXR)
	}
	if u.GetNamespace() != "" {
		// Read from the decoded object: numbers arrive as floats.
		c.generation = into.(metav1.Object).GetGeneration() //nolint:forcetypeassert // Both kinds are objects.
	}
	return c, nil
}

// claimKind is the claim kind of a composite's legacy twin.
func claimKind(c composite) string {
	if c.agent {
		return v1alpha1.AgentClaimKind
	}
	return v1alpha1.LambdaClaimKind
}
