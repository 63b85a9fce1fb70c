package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestInputDeadLetterSink checks that the Input's dead-letter sink reaches
// the Triggers Direct mode composes for a function that names none.
func TestInputDeadLetterSink(t *testing.T) {
	const sink = "http://dead-letters.platform.svc.cluster.local"
	input := `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","build":{"registry":"` + testRegistry + `"},"eventing":{"deadLetterSink":{"uri":"` + sink + `"}}}`
	spec := parseSpec(t, helloSpec)
	building := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}})
	built := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry},
		Observed: render.Observed{Build: &render.Pushed{Identity: building.BuildIdentity, Digest: testDigest}}})
	req := &fnv1.RunFunctionRequest{
		Input: codectest.Struct(t, input),
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, helloSpec, `{"build":{"identity":"`+building.BuildIdentity+`","jobName":"`+building.BuildJob.Name+`","digest":"`+testDigest+`"}}`))},
			Resources: map[string]*fnv1.Resource{"Service/hello": {Resource: serviceRolledOut(t, built.Service, nil)}},
		},
		RequiredResources: map[string]*fnv1.Resources{"broker-events": {}},
	}
	rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := rsp.GetDesired().GetResources()["Trigger/"+trig(built, 0)]
	if !ok {
		t.Fatalf("no Trigger %s composed; results %v", trig(built, 0), rsp.GetResults())
	}
	got, _, _ := unstructured.NestedString(tr.GetResource().AsMap(), "spec", "delivery", "deadLetterSink", "uri")
	if got != sink {
		t.Errorf("the composed Trigger's dead-letter sink is %q, want the Input's %q", got, sink)
	}
}
