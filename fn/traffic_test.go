package main

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestTrafficComposed checks that Direct mode composes a Service that
// splits traffic and paces its rollout, reports the split Knative routes,
// tag URLs included, in the composite's status, and stalls the composite
// with Knative's words when its Route cannot resolve a pin.
func TestTrafficComposed(t *testing.T) {
	const image = "source: {image: {repository: ghcr.io/acme/hello, tag: v2}}\n"
	const split = image + "traffic: {targets: [{revisionName: hello-00001, percent: 90, tag: stable}, {percent: 10, tag: canary}], rolloutDuration: 2m}\n"

	rsp := runDirect(t, split, nil)
	svc := composedService(t, rsp)
	if got := len(svc.Spec.Traffic); got != 2 || svc.Spec.Traffic[0].RevisionName != "hello-00001" || *svc.Spec.Traffic[0].Percent != 90 || svc.Spec.Traffic[1].Tag != "canary" {
		t.Errorf("RunFunction(...): the Service's traffic %+v, want hello-00001 at 90 and the latest at 10 tagged canary", svc.Spec.Traffic)
	}
	if got := svc.Annotations["serving.knative.dev/rollout-duration"]; got != "2m" {
		t.Errorf("RunFunction(...): the Service's rollout-duration %q, want 2m", got)
	}

	// Knative rolled out hello-00001 before the split, and hello-00002
	// under it.
	rsp = runDirect(t, split, map[string]*fnv1.Resource{"Service/" + testName: {Resource: serviceRolledOut(t, svc, nil, nil)}})
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()
	traffic, _, _ := unstructured.NestedSlice(st, "status", "traffic")
	var got []v1alpha1.TrafficObservation
	for _, o := range traffic {
		var to v1alpha1.TrafficObservation
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.(map[string]any), &to); err != nil { //nolint:forcetypeassert // A list of objects.
			t.Fatal(err)
		}
		got = append(got, to)
	}
	want := []v1alpha1.TrafficObservation{
		{RevisionName: "hello-00001", Percent: 90, Tag: "stable", URL: "http://stable-hello.apps.example.com"},
		{RevisionName: "hello-00002", LatestRevision: true, Percent: 10, Tag: "canary", URL: "http://canary-hello.apps.example.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunFunction(...): status.traffic: -want, +got:\n%s", diff)
	}

	const missing = image + "traffic: {targets: [{revisionName: hello-00009, percent: 100}]}\n"
	svc = composedService(t, runDirect(t, missing, nil))
	rsp = runDirect(t, missing, map[string]*fnv1.Resource{"Service/" + testName: {Resource: serviceRolledOut(t, svc, nil)}})
	const msg = `RevisionMissing: Revision "hello-00009" referenced in traffic not found.`
	if diff := cmp.Diff(stalledConditions(string(v1alpha1.ReasonRouteFailed), msg), rsp.GetConditions(), protocmp.Transform()); diff != "" {
		t.Errorf("RunFunction(...): conditions: -want, +got:\n%s", diff)
	}
}

// composedService is the Knative Service a response composes.
func composedService(t *testing.T, rsp *fnv1.RunFunctionResponse) *servingv1.Service {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()["Service/"+testName]
	if !ok {
		t.Fatalf("RunFunction(...): no Service composed; results: %v", rsp.GetResults())
	}
	svc := &servingv1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.GetResource().AsMap(), svc); err != nil {
		t.Fatal(err)
	}
	return svc
}
