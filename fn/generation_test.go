package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

// TestObservedGeneration checks the generation a pass reports, which is what
// Flux reads first: a claim whose new spec no pass has acted on must not
// look like it has.
func TestObservedGeneration(t *testing.T) {
	changedSpec := strings.Replace(helloSpec, `"ok": True`, `"ok": False`, 1)
	// legacy is a claim's composite that last reported generation 2.
	legacy := func(kind, spec string) string {
		xr := fromYAML(t, legacyXR(t, kind, "hello-x7k2p", spec))
		xr["status"] = map[string]any{"observedGeneration": 2}
		return toJSON(t, xr)
	}
	claim := func(kind, spec string, generation int) *fnv1.Resources {
		return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: codectest.Struct(t, toJSON(t, map[string]any{
			"apiVersion": "platform.lambda.crossplane.io/v1alpha1", "kind": kind,
			"metadata": map[string]any{"name": testName, "namespace": testNS, "generation": generation},
			// Crossplane's own claim fields are not copied to the composite.
			"spec": withCompositionRef(fromYAML(t, spec)),
		}))}}}
	}

	cases := map[string]struct {
		reason   string
		xr       string
		claim    *fnv1.Resources
		want     float64
		required *fnv1.ResourceSelector
	}{
		"NamespacedXR": {
			reason: "A v2 XR reports its own generation and requires nothing for it.",
			xr:     lambdaXR(t, helloSpec, ""),
			want:   1,
		},
		"ClaimNotSupplied": {
			reason:   "Until Crossplane supplies the claim, a claim's composite reports the generation it reported before.",
			xr:       legacy("XLambda", helloSpec),
			want:     2,
			required: claimOf("LambdaClaim"),
		},
		"ClaimCarried": {
			reason:   "A claim whose spec the composite carries has its generation reported.",
			xr:       legacy("XLambda", helloSpec),
			claim:    claim("LambdaClaim", helloSpec, 3),
			want:     3,
			required: claimOf("LambdaClaim"),
		},
		"ClaimAhead": {
			reason:   "A claim whose new spec Crossplane has not copied to the composite yet is not reported as acted on.",
			xr:       legacy("XLambda", helloSpec),
			claim:    claim("LambdaClaim", changedSpec, 3),
			want:     2,
			required: claimOf("LambdaClaim"),
		},
		"ClaimGone": {
			reason:   "A claim that no longer exists leaves the generation reported before.",
			xr:       legacy("XLambda", helloSpec),
			claim:    &fnv1.Resources{},
			want:     2,
			required: claimOf("LambdaClaim"),
		},
		"AgentClaimCarried": {
			reason:   "An agent's claim counts as a function's does.",
			xr:       legacy("XAgent", supportSpec),
			claim:    claim("AgentClaim", supportSpec, 5),
			want:     5,
			required: claimOf("AgentClaim"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{
				Input:    codectest.Struct(t, managedInput),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, tc.xr)}},
			}
			if tc.claim != nil {
				req.RequiredResources = map[string]*fnv1.Resources{requireClaim: tc.claim}
			}
			f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
			rsp, err := run(t, f, req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): %v", tc.reason, err)
			}
			status := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()
			if diff := cmp.Diff(tc.want, status["observedGeneration"].GetNumberValue()); diff != "" {
				t.Errorf("%s\nRunFunction(...): status.observedGeneration: -want, +got:\n%s\nresults: %v", tc.reason, diff, rsp.GetResults())
			}
			if diff := cmp.Diff(tc.required, rsp.GetRequirements().GetResources()[requireClaim], protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): the claim's requirement: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// withCompositionRef is a claim's spec with a field Crossplane keeps on the
// claim.
func withCompositionRef(spec map[string]any) map[string]any {
	spec["compositionRef"] = map[string]any{"name": "xlambdas-managed"}
	return spec
}

// claimOf selects the claim of the kind named testName in testNS, as a
// claim's composite requires it.
func claimOf(kind string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: "platform.lambda.crossplane.io/v1alpha1", Kind: kind, Namespace: ptr.To(testNS), Match: &fnv1.ResourceSelector_MatchName{MatchName: testName}}
}
