package fuzz

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// defaults let every spec that needs a build render one.
var defaults = render.Defaults{Registry: "registry.example/lambdas"}

// observed are the cluster facts that let render go past waiting: a
// resolved source, and the addresses the examples' agents forward to.
var observed = render.Observed{
	SourceIdentity: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
	ForwardAddresses: map[string]string{
		"agent/supervisor": "http://broker-ingress.knative-eventing.svc.cluster.local/apps/supervisor",
		"broker/humans":    "http://broker-ingress.knative-eventing.svc.cluster.local/apps/humans",
	},
}

const digest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// seeds adds the forProvider of every example and valid test manifest of a
// kind, as JSON, so the fuzzer starts from every shape of spec the project
// knows.
func seeds(f *testing.F, kind string) {
	f.Helper()
	for _, dir := range []string{"../../../examples", "../../../apis/v1alpha1/testdata/valid"} {
		objs, err := manifest.Read(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, u := range objs {
			if u.GetKind() != kind {
				continue
			}
			spec, _, err := unstructured.NestedMap(u.Object, "spec", "forProvider")
			if err != nil {
				f.Fatal(err)
			}
			b, err := json.Marshal(spec)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

// FuzzFunction decodes arbitrary bytes as a LambdaFunction spec, as the API
// server would hand them over, and renders it: render may refuse a spec, but
// never panic.
func FuzzFunction(f *testing.F) {
	seeds(f, v1alpha1.LambdaFunctionKind)
	f.Fuzz(func(t *testing.T, b []byte) {
		var spec v1alpha1.LambdaFunctionParameters
		if json.Unmarshal(b, &spec) != nil {
			return
		}
		in := render.FunctionInput{Namespace: "apps", Name: "fuzz", Spec: spec, Defaults: defaults, Observed: observed}
		out, err := render.Function(in)
		if err != nil || out.BuildIdentity == "" {
			return
		}
		in.Observed.Build = &render.Pushed{Identity: out.BuildIdentity, Digest: digest}
		_, _ = render.Function(in)
	})
}

// FuzzAgent does the same for LambdaAgent specs.
func FuzzAgent(f *testing.F) {
	seeds(f, v1alpha1.LambdaAgentKind)
	f.Fuzz(func(t *testing.T, b []byte) {
		var spec v1alpha1.LambdaAgentParameters
		if json.Unmarshal(b, &spec) != nil {
			return
		}
		_, _ = render.Agent(render.AgentInput{Namespace: "apps", Name: "fuzz", Spec: spec, Observed: observed})
	})
}
