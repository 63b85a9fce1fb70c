package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestSchedulesComposed checks that Direct mode composes a PingSource per
// schedule, sending to the function's Service, and that a schedule Knative
// would refuse stalls the composite with Knative's words and keeps what
// runs as it is.
func TestSchedulesComposed(t *testing.T) {
	const image = "source: {image: {repository: ghcr.io/acme/reports, tag: v1}}\n"
	rsp := runDirect(t, image+"eventing: {schedules: [{name: nightly, schedule: '30 2 * * *', timeZone: Europe/Berlin, data: {report: orders}}]}\n", nil)
	ping, ok := rsp.GetDesired().GetResources()["PingSource/"+render.ScheduleName(testName, "nightly")]
	if !ok {
		t.Fatalf("RunFunction(...): no PingSource composed; results: %v", rsp.GetResults())
	}
	u := ping.GetResource().AsMap()
	for field, want := range map[string]string{"schedule": "30 2 * * *", "timezone": "Europe/Berlin", "data": `{"report":"orders"}`} {
		if got, _, _ := unstructured.NestedString(u, "spec", field); got != want {
			t.Errorf("RunFunction(...): PingSource spec.%s: want %q, got %q", field, want, got)
		}
	}
	if got, _, _ := unstructured.NestedString(u, "spec", "sink", "ref", "name"); got != testName {
		t.Errorf("RunFunction(...): the PingSource sends to %q, want the function's Service %q", got, testName)
	}
	got, _, _ := unstructured.NestedStringSlice(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "eventing", "schedules")
	if len(got) != 1 || got[0] != render.ScheduleName(testName, "nightly") {
		t.Errorf("RunFunction(...): status.eventing.schedules %v, want the PingSource's name", got)
	}

	rsp = runDirect(t, image+"eventing: {schedules: [{name: nightly, schedule: '0 22-6 * * *'}]}\n", rsp.GetDesired().GetResources())
	kept, _, _ := unstructured.NestedString(rsp.GetDesired().GetResources()["PingSource/"+render.ScheduleName(testName, "nightly")].GetResource().AsMap(), "spec", "schedule")
	if kept != "30 2 * * *" {
		t.Errorf("RunFunction(...): a schedule Knative refuses changed the running PingSource's schedule to %q", kept)
	}
	var refused *fnv1.Result
	for _, r := range rsp.GetResults() {
		if r.GetReason() == string(v1alpha1.ReasonInvalid) {
			refused = r
		}
	}
	if refused == nil || !strings.Contains(refused.GetMessage(), "beginning of range (22) beyond end of range (6)") {
		t.Errorf("RunFunction(...): want an InvalidSpec result in Knative's words, got %v", rsp.GetResults())
	}
}
