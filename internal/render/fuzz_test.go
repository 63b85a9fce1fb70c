package render

import (
	"encoding/json"
	"testing"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// seeds are the specs of the golden cases as JSON, so the fuzzer starts from
// every shape of spec the project knows.
func seeds(f *testing.F, kind string) {
	f.Helper()
	objs := goldenInputs(f)
	for _, in := range objs {
		if in.kind != kind {
			continue
		}
		b, err := json.Marshal(in.spec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
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
		in := FunctionInput{Namespace: "apps", Name: "fuzz", Spec: spec, Defaults: testDefaults, Observed: testObserved}
		out, err := Function(in)
		if err != nil || out.BuildIdentity == "" {
			return
		}
		in.Observed.Build = &Build{Identity: out.BuildIdentity, Digest: testDigest}
		_, _ = Function(in)
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
		_, _ = Agent(AgentInput{Namespace: "apps", Name: "fuzz", Spec: spec, Observed: testObserved})
	})
}
