package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestLighten(t *testing.T) {
	deployment := func(kind string, requests ...map[string]any) *unstructured.Unstructured {
		var containers []any
		for _, r := range requests {
			containers = append(containers, map[string]any{"name": "c", "resources": map[string]any{"requests": r, "limits": map[string]any{"cpu": "1"}}})
		}
		return &unstructured.Unstructured{Object: map[string]any{"kind": kind, "spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containers}}}}}
	}
	cases := map[string]struct {
		reason string
		in     *unstructured.Unstructured
		want   *unstructured.Unstructured
	}{
		"Divided": {
			reason: "Each container's CPU request is a tenth of what it was; memory and limits are kept.",
			in:     deployment("Deployment", map[string]any{"cpu": "300m", "memory": "60Mi"}, map[string]any{"cpu": "1"}),
			want:   deployment("Deployment", map[string]any{"cpu": "30m", "memory": "60Mi"}, map[string]any{"cpu": "100m"}),
		},
		"AtLeastOneMilli": {
			reason: "A request too small to divide keeps a millicore.",
			in:     deployment("Deployment", map[string]any{"cpu": "5m"}),
			want:   deployment("Deployment", map[string]any{"cpu": "1m"}),
		},
		"NoRequest": {
			reason: "A container without a CPU request gets none.",
			in:     deployment("Deployment", map[string]any{"memory": "60Mi"}),
			want:   deployment("Deployment", map[string]any{"memory": "60Mi"}),
		},
		"NotADeployment": {
			reason: "Only Deployments are changed.",
			in:     deployment("DaemonSet", map[string]any{"cpu": "300m"}),
			want:   deployment("DaemonSet", map[string]any{"cpu": "300m"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := lighten([]*unstructured.Unstructured{tc.in})
			if diff := cmp.Diff([]*unstructured.Unstructured{tc.want}, got); diff != "" {
				t.Errorf("%s\nlighten(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
