package main

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
)

const (
	requireClaim   = "claim"
	errDecodeClaim = "cannot decode the composite resource's claim"
)

// generation is the generation of the spec this pass acts on, which the
// composite reports as status.observedGeneration for Flux and kstatus: a
// namespaced XR's own, or a legacy XR's claim's, which Crossplane copies to
// the claim with the rest of the status. The claim's conditions cannot tell:
// Crossplane stamps them with the claim's generation as soon as it copies
// them, while they still describe the spec before. So a claim's generation
// counts only once its spec is the one this pass renders; until then the
// generation reported before stands, and the claim reads as in progress.
func (p *pass) generation() (int64, error) {
	if !p.xr.legacy {
		return p.xr.generation, nil
	}
	claims, ok := p.require(requireClaim, byName(v1alpha1.SchemeGroupVersion.String(), claimKind(p.xr), p.xr.namespace, p.xr.name))
	if ok && len(claims) == 1 {
		gen, current, err := p.xr.claimGeneration(claims[0])
		if err != nil || current {
			return gen, err
		}
	}
	return p.xr.reported(), nil
}

// claimGeneration is a claim's generation, and whether the composite carries
// the spec of that generation.
func (c *composite) claimGeneration(claim codec.Object) (int64, bool, error) {
	var into metav1.Object
	var theirs, mine any
	if c.agent {
		a := &v1alpha1.Agent{}
		into, theirs, mine = a, &a.Spec, &c.agentXR.Spec
	} else {
		l := &v1alpha1.Lambda{}
		into, theirs, mine = l, &l.Spec, &c.lambdaXR.Spec
	}
	if err := codec.Decode(claim, into, nil); err != nil {
		return 0, false, errors.Wrap(err, errDecodeClaim)
	}
	return into.GetGeneration(), equality.Semantic.DeepEqual(theirs, mine), nil
}

// reported is the generation the composite last reported.
func (c *composite) reported() int64 {
	if c.agent {
		return c.agentXR.Status.ObservedGeneration
	}
	return c.lambdaXR.Status.ObservedGeneration
}
