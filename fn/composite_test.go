package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

// TestLegacyNamespace checks where a legacy XR's objects go. Before, the
// claim-namespace label chose it, and anyone who could create an XLambda
// could aim it at kube-system; now only the claim reference does, and a
// system namespace is refused unless the Input allows it.
func TestLegacyNamespace(t *testing.T) {
	spec := `{"source":{"image":{"repository":"ghcr.io/acme/fn","tag":"v1"}}}`
	labelled := `{"apiVersion":"platform.lambda.crossplane.io/v1alpha1","kind":"XLambda","metadata":{"name":"grab","labels":{"crossplane.io/claim-name":"grab","crossplane.io/claim-namespace":"kube-system"}},"spec":` + spec + `}`
	inKubeSystem := strings.Replace(legacyXR(t, "XLambda", "grab", spec), `"namespace":"`+testNS+`"`, `"namespace":"kube-system"`, 1)
	cases := map[string]struct {
		reason string
		xr     string
		input  string
		want   string
	}{
		"LabelOnly": {
			reason: "Labels alone name no claim: nothing is composed.",
			xr:     labelled,
			want:   "is cluster scoped and has no claim",
		},
		"ClaimInKubeSystem": {
			reason: "A claim reference into kube-system is refused.",
			xr:     inKubeSystem,
			want:   "a system namespace",
		},
		"AllowedByInput": {
			reason: "The platform may allow a system namespace in the Input.",
			xr:     inKubeSystem,
			input:  `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","build":{"registry":"registry.test/lambdas"},"allowedSystemNamespaces":["kube-system"]}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(tc.xr, "kube-system") {
				t.Fatalf("the case's XR does not aim at kube-system: %s", tc.xr)
			}
			input := tc.input
			if input == "" {
				input = testInput
			}
			req := &fnv1.RunFunctionRequest{Input: codectest.Struct(t, input), Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, tc.xr)}}}
			rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, r := range rsp.GetResults() {
				said = append(said, r.GetMessage())
			}
			for _, c := range rsp.GetConditions() {
				said = append(said, c.GetMessage())
			}
			got := strings.Join(said, "; ")
			composed := 0
			for _, r := range rsp.GetDesired().GetResources() {
				if strings.Contains(r.GetResource().String(), "kube-system") {
					composed++
				}
			}
			if tc.want == "" {
				if composed == 0 {
					t.Errorf("\n%s\nnothing was composed in kube-system: %s", tc.reason, got)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("\n%s\nRunFunction said %q; want %q", tc.reason, got, tc.want)
			}
			if composed > 0 {
				t.Errorf("\n%s\n%d objects composed in kube-system", tc.reason, composed)
			}
		})
	}
}

// TestCompositeReads checks what a pass reads of its composite: its spec
// and status whole, and of its metadata the generation and the rebuild
// annotation, not its labels or a client's record of what it applied.
func TestCompositeReads(t *testing.T) {
	const (
		spec   = `"spec":{"source":{"image":{"repository":"ghcr.io/acme/fn","tag":"v1"}}},"status":{"phase":"Ready"}`
		xr     = `{"apiVersion":"platform.lambda.crossplane.io/v1alpha1","kind":"Lambda","metadata":{"name":"hello","namespace":"team","generation":3,"labels":{"team":"a"},"annotations":{"lambda.m.crossplane.io/rebuild":"2","kubectl.kubernetes.io/last-applied-configuration":"{}"}},` + spec + `}`
		wanted = `{"apiVersion":"platform.lambda.crossplane.io/v1alpha1","kind":"Lambda","metadata":{"name":"hello","namespace":"team","generation":3,"annotations":{"lambda.m.crossplane.io/rebuild":"2"}},` + spec + `}`
	)
	c, err := compositeOf(codec.Object(codectest.Encoded(t, codectest.Struct(t, xr))))
	if err != nil {
		t.Fatal(err)
	}
	want := &composite{}
	if err := codec.Decode(codec.Object(codectest.Encoded(t, codectest.Struct(t, wanted))), &want.lambdaXR, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.lambdaXR, c.lambdaXR); diff != "" {
		t.Errorf("compositeOf(): -want, +got:\n%s", diff)
	}
	if c.generation != 3 {
		t.Errorf("compositeOf(): generation %d, want 3", c.generation)
	}
}
