package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestVisibilityComposed checks that Direct mode composes a cluster-local
// workload's Service with Knative's visibility label, and a public one's
// without it.
func TestVisibilityComposed(t *testing.T) {
	const image = "source: {image: {repository: ghcr.io/acme/order-router, tag: v1.4.0}}\n"
	cases := map[string]struct {
		reason string
		spec   string
		want   string
	}{
		"ClusterLocal": {
			reason: "A cluster-local workload's Service carries the label that keeps it off the ingress.",
			spec:   image + "workload: {visibility: cluster-local}\n",
			want:   "cluster-local",
		},
		"Public": {
			reason: "A public workload's Service has no visibility label: public is Knative's default.",
			spec:   image + "workload: {visibility: public}\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := runDirect(t, tc.spec, nil)
			svc, ok := rsp.GetDesired().GetResources()["Service/"+testName]
			if !ok {
				t.Fatalf("%s\nRunFunction(...): no Service composed; results: %v", tc.reason, rsp.GetResults())
			}
			got, _, _ := unstructured.NestedString(svc.GetResource().AsMap(), "metadata", "labels", "networking.knative.dev/visibility")
			if got != tc.want {
				t.Errorf("%s\nRunFunction(...): the Service's visibility label: want %q, got %q", tc.reason, tc.want, got)
			}
		})
	}
}
