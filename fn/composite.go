package main

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	lambdav1alpha1 "github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
)

const (
	errDecodeXR    = "cannot decode the composite resource"
	errFmtNoClaim  = "%s %s is cluster scoped and has no claim: its objects go to the claim's namespace, so create a %s instead"
	errFmtNoObject = "cannot read the observed %s"
	errFmtSystemNS = "the claim of %s %s is in namespace %s, a system namespace: nothing is composed there unless the function's Input lists it in allowedSystemNamespaces"
)

// System namespaces, where a claim's objects never go unless the Input
// allows it: these, and any whose name starts with one of the prefixes.
var (
	systemNamespaces        = []string{"crossplane-system"}
	systemNamespacePrefixes = []string{"kube-", "knative-"}
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
	// counts its own generations (see pass.generation).
	generation int64

	// legacy is true of a cluster-scoped XR made for a claim.
	legacy bool

	lambdaXR v1alpha1.Lambda
	agentXR  v1alpha1.Agent
}

// compositeMembers are what a pass reads of its composite: its spec and
// status, and of its metadata the generation and the one annotation a user
// asks for a rebuild with. Labels and other annotations, such as a client's
// record of what it last applied, can be larger than the rest.
var compositeMembers = codec.Selection{
	"apiVersion": nil, "kind": nil, "spec": nil, "status": nil,
	"metadata": {"name": nil, "namespace": nil, "generation": nil, "annotations": {lambdav1alpha1.AnnotationRebuild: nil}},
}

// compositeOf reads which workload a composite resource asks for.
func compositeOf(xr codec.Object) (*composite, error) {
	c := &composite{kind: codec.StringAt(xr, "kind"), namespace: codec.StringAt(xr, "metadata", "namespace"), name: codec.StringAt(xr, "metadata", "name")}
	var into metav1.Object
	switch c.kind {
	case v1alpha1.LambdaKind, v1alpha1.XLambdaKind:
		into = &c.lambdaXR
	case v1alpha1.AgentKind, v1alpha1.XAgentKind:
		c.agent, into = true, &c.agentXR
	default:
		return c, errors.Errorf(errFmtNoKind, c.kind)
	}
	namespaced := c.namespace != ""
	if !namespaced {
		// Only the claim reference Crossplane binds: labels can be set by
		// anyone who writes the XR, and would choose any namespace.
		ns, name := codec.StringAt(xr, "spec", "claimRef", "namespace"), codec.StringAt(xr, "spec", "claimRef", "name")
		if ns == "" || name == "" {
			return c, errors.Errorf(errFmtNoClaim, c.kind, c.name, claimKind(c))
		}
		c.namespace, c.name, c.legacy = ns, name, true
	}
	// Crossplane's own spec fields (compositionRef, claimRef and the like)
	// are not ours and are left out.
	if err := codec.Decode(xr, into, compositeMembers); err != nil {
		return c, errors.Wrap(err, errDecodeXR)
	}
	if namespaced {
		c.generation = into.GetGeneration()
	}
	return c, nil
}

// phase is the phase the composite's status reports.
func (c *composite) phase() lambdav1alpha1.Phase {
	if c.agent {
		return c.agentXR.Status.Phase
	}
	return c.lambdaXR.Status.Phase
}

// claimKind is the claim kind of a composite's legacy twin.
func claimKind(c *composite) string {
	if c.agent {
		return v1alpha1.AgentClaimKind
	}
	return v1alpha1.LambdaClaimKind
}

// systemNamespace refuses a legacy XR whose claim is in a system namespace
// that allowed does not list.
func (c *composite) systemNamespace(allowed []string) error {
	ns := c.namespace
	system := slices.Contains(systemNamespaces, ns) || slices.ContainsFunc(systemNamespacePrefixes, func(p string) bool { return strings.HasPrefix(ns, p) })
	if !c.legacy || !system || slices.Contains(allowed, ns) {
		return nil
	}
	return errors.Errorf(errFmtSystemNS, c.kind, c.name, ns)
}
