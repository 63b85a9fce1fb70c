package main

import (
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestNamespacedProviderConfigCannotLoosenComposed plays a team that writes
// the ProviderConfig the platform's Input names in the composite's
// namespace, and uses it to loosen the build fence or the limit on
// forwards. Before, the function honoured it as if the platform wrote it:
// an Unrestricted build ran with no NetworkPolicy. Each is held, naming the
// field, and composes nothing; a ProviderConfig that tightens is honoured.
func TestNamespacedProviderConfigCannotLoosenComposed(t *testing.T) {
	const input = `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","providerConfigRef":{"kind":"ProviderConfig","name":"team"}}`
	cases := map[string]struct {
		reason   string
		build    v1alpha1.BuildDefaults
		eventing *v1alpha1.EventingDefaults
		loosens  bool
	}{
		"Unrestricted": {
			reason:  "Unrestricted turns the build's NetworkPolicy off.",
			build:   v1alpha1.BuildDefaults{Network: &v1alpha1.BuildNetwork{Policy: v1alpha1.BuildNetworkUnrestricted}},
			loosens: true,
		},
		"Relay": {
			reason:   "A relay of the team's own need not count forwards.",
			eventing: &v1alpha1.EventingDefaults{RelayImage: ptr.To("attacker.example/relay:latest")},
			loosens:  true,
		},
		"Tighter": {
			reason: "A shorter maximum tightens the fence, and the build is composed.",
			build:  v1alpha1.BuildDefaults{MaxTimeout: ptr.To(v1alpha1.GoDuration("10m"))},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.build
			b.Registry = ptr.To(v1alpha1.ImageRepository(testRegistry))
			pc := v1alpha1.ProviderConfig{Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity}, Build: &b, Eventing: tc.eventing}}
			pc.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ProviderConfigKind))
			pc.SetNamespace(testNS)
			pc.SetName("team")
			req := &fnv1.RunFunctionRequest{
				Input:    codectest.Struct(t, input),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, helloSpec, ""))}},
				RequiredResources: map[string]*fnv1.Resources{
					requireProviderConfig: {Items: []*fnv1.Resource{{Resource: codectest.Struct(t, toJSON(t, pc))}}},
					requireNamespace:      {},
					"broker-events":       {},
				},
			}
			rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): %v", tc.reason, err)
			}
			composed := summarise(t, rsp)
			if !tc.loosens {
				if !hasKind(composed, "Job") {
					t.Errorf("%s\nno build Job composed: %v; conditions %v", tc.reason, composed, rsp.GetConditions())
				}
				return
			}
			want := stalledConditions(string(v1alpha1.ReasonInvalid), render.Loosens(pc.Name, pc.Spec.Build, pc.Spec.Eventing).Error())
			if diff := cmp.Diff(want, rsp.GetConditions(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): conditions: -want, +got:\n%s", tc.reason, diff)
			}
			if len(composed) > 0 {
				t.Errorf("%s\nRunFunction(...) composed %v; want nothing", tc.reason, composed)
			}
		})
	}
}

// hasKind is true when a composed resource is of the kind.
func hasKind(composed map[string]composedSummary, kind string) bool {
	for k := range composed {
		if strings.HasPrefix(k, kind+"/") {
			return true
		}
	}
	return false
}
