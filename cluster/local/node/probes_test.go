package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPatient(t *testing.T) {
	deployment := func(kind string, container map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": kind, "spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}}}}
	}
	probe := func(timeout, failures int64) map[string]any {
		return map[string]any{"periodSeconds": int64(1), "timeoutSeconds": timeout, "failureThreshold": failures}
	}
	cases := map[string]struct {
		reason string
		in     *unstructured.Unstructured
		want   *unstructured.Unstructured
	}{
		"Raised": {
			reason: "Knative's one-second timeouts and three misses are raised; the period is kept.",
			in:     deployment("Deployment", map[string]any{"readinessProbe": probe(1, 3), "livenessProbe": probe(1, 3)}),
			want:   deployment("Deployment", map[string]any{"readinessProbe": probe(5, 3), "livenessProbe": probe(5, 10)}),
		},
		"Unset": {
			reason: "A probe that relies on the defaults gets the same patience.",
			in:     deployment("Deployment", map[string]any{"livenessProbe": map[string]any{"periodSeconds": int64(1)}}),
			want:   deployment("Deployment", map[string]any{"livenessProbe": map[string]any{"periodSeconds": int64(1), "timeoutSeconds": int64(5), "failureThreshold": int64(10)}}),
		},
		"KeptWhenMore": {
			reason: "A probe more patient already is kept.",
			in:     deployment("Deployment", map[string]any{"readinessProbe": probe(8, 3), "livenessProbe": probe(9, 12)}),
			want:   deployment("Deployment", map[string]any{"readinessProbe": probe(8, 3), "livenessProbe": probe(9, 12)}),
		},
		"NoProbes": {
			reason: "A container without probes gets none.",
			in:     deployment("Deployment", map[string]any{"name": "c"}),
			want:   deployment("Deployment", map[string]any{"name": "c"}),
		},
		"NotADeployment": {
			reason: "Only Deployments are changed.",
			in:     deployment("DaemonSet", map[string]any{"livenessProbe": probe(1, 3)}),
			want:   deployment("DaemonSet", map[string]any{"livenessProbe": probe(1, 3)}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := patient([]*unstructured.Unstructured{tc.in})
			if diff := cmp.Diff([]*unstructured.Unstructured{tc.want}, got); diff != "" {
				t.Errorf("%s\npatient(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
