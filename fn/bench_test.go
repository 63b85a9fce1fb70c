package main

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// BenchmarkRunFunction runs one Direct pass over a Lambda whose build has
// just succeeded: the pass reads the Job and its pod, renders twice and
// returns all five kinds of object (ConfigMap, Job, Broker, Service,
// Trigger) with the XR's status and conditions.
func BenchmarkRunFunction(b *testing.B) {
	spec := parseSpec(b, helloSpec)
	building := mustRender(b, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}})
	req := &fnv1.RunFunctionRequest{
		Input: mustStruct(b, testInput),
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: mustStruct(b, lambdaXR(b, helloSpec, ""))},
			Resources: map[string]*fnv1.Resource{
				"Job/" + building.BuildJob.Name:           {Resource: jobWithStatus(b, building.BuildJob, finished(batchv1.JobComplete))},
				"ConfigMap/" + building.BuildContext.Name: {Resource: toStruct(b, building.BuildContext)},
				"Broker/events":                           {Resource: readyStruct(b, building.Broker)},
			},
		},
		RequiredResources: map[string]*fnv1.Resources{"build-pods": {Items: []*fnv1.Resource{{Resource: podTerminated(b, building.BuildJob.Name, 0, testDigest)}}}},
	}
	f := &Function{log: logging.NewNopLogger(), sources: noSources(b)}
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil || len(rsp.GetDesired().GetResources()) != 5 {
		b.Fatalf("RunFunction: %v, %d desired resources, want 5", err, len(rsp.GetDesired().GetResources()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.RunFunction(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
