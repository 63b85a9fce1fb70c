package render

import (
	"testing"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// goldenSpec returns the spec of one golden input by name.
func goldenSpec(b *testing.B, name string) any {
	b.Helper()
	for _, in := range goldenInputs(b) {
		if in.name == name {
			return in.spec
		}
	}
	b.Fatalf("no golden input %s", name)
	return nil
}

// BenchmarkFunction renders the LambdaFunction that sets every field, before
// its build (ConfigMap and Job) and once built (Service, Broker, Triggers).
func BenchmarkFunction(b *testing.B) {
	spec := goldenSpec(b, "everything").(v1alpha1.LambdaFunctionParameters) //nolint:forcetypeassert // The golden spec of a function.
	in := FunctionInput{Namespace: "apps", Name: "everything", Spec: spec, Defaults: testDefaults, Observed: testObserved}
	out, err := Function(in)
	if err != nil {
		b.Fatal(err)
	}
	built := in
	built.Observed.Build = &Pushed{Identity: out.BuildIdentity, Digest: testDigest}
	for name, in := range map[string]FunctionInput{"Building": in, "Built": built} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Function(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgent renders the LambdaAgent that sets every field.
func BenchmarkAgent(b *testing.B) {
	spec := goldenSpec(b, "triage").(v1alpha1.LambdaAgentParameters) //nolint:forcetypeassert // The golden spec of an agent.
	in := AgentInput{Namespace: "apps", Name: "triage", Spec: spec, Observed: testObserved}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Agent(in); err != nil {
			b.Fatal(err)
		}
	}
}
