package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestServiceMetadata(t *testing.T) {
	scaling := &v1alpha1.Scaling{MinReplicas: ptr.To[int32](1)}
	meta := &v1alpha1.WorkloadSettings{
		Labels:      map[string]string{"team": "payments"},
		Annotations: map[string]string{"sidecar.istio.io/inject": "true", "prometheus.io/scrape": "true"},
	}
	cases := map[string]struct {
		reason      string
		scaling     *v1alpha1.Scaling
		meta        *v1alpha1.WorkloadSettings
		wantService map[string]string
		wantPod     map[string]string
		wantTeam    string
	}{
		"ScalingOnly": {
			reason:  "Without metadata the revision template carries only the autoscaling annotations.",
			scaling: scaling,
			wantPod: map[string]string{annotationMinScale: "1"},
		},
		"MetadataReachesPods": {
			reason:      "Mesh injection and scrape annotations act on pods, so they reach the revision template beside the autoscaling ones, and labels reach both.",
			scaling:     scaling,
			meta:        meta,
			wantService: meta.Annotations,
			wantPod:     map[string]string{annotationMinScale: "1", "sidecar.istio.io/inject": "true", "prometheus.io/scrape": "true"},
			wantTeam:    "payments",
		},
		"MetadataWithoutScaling": {
			reason:      "Annotations reach pods of a workload without scaling fields too.",
			meta:        meta,
			wantService: meta.Annotations,
			wantPod:     meta.Annotations,
			wantTeam:    "payments",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := workload{kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "fn", container: "function",
				image: "registry.example/fn@" + testDigest, port: 8080, scaling: tc.scaling, meta: tc.meta, readiness: httpPath(PathReady, 8080)}
			svc := w.service()
			tmpl := svc.Spec.Template
			if diff := cmp.Diff(tc.wantService, svc.Annotations); diff != "" {
				t.Errorf("%s\nService annotations: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantPod, tmpl.Annotations); diff != "" {
				t.Errorf("%s\nrevision template annotations: -want, +got:\n%s", tc.reason, diff)
			}
			for what, l := range map[string]map[string]string{"Service": svc.Labels, "revision template": tmpl.Labels} {
				if got := l["team"]; got != tc.wantTeam {
					t.Errorf("%s\n%s label team: want %q, got %q", tc.reason, what, tc.wantTeam, got)
				}
			}
			if tmpl.Labels[LabelName] != "fn" {
				t.Errorf("%s\nthe revision template lost its selection labels: %v", tc.reason, tmpl.Labels)
			}
		})
	}
}

func TestVisibility(t *testing.T) {
	const key = "networking.knative.dev/visibility"
	cases := map[string]struct {
		reason      string
		meta        *v1alpha1.WorkloadSettings
		wantService string
	}{
		"Default": {
			reason: "A workload without metadata is public: no visibility label.",
		},
		"Public": {
			reason: "Public is Knative's default, so it needs no label.",
			meta:   &v1alpha1.WorkloadSettings{Visibility: ptr.To(v1alpha1.VisibilityPublic)},
		},
		"ClusterLocal": {
			reason:      "A cluster-local workload's Service carries Knative's visibility label, which its Route takes from it.",
			meta:        &v1alpha1.WorkloadSettings{Visibility: ptr.To(v1alpha1.VisibilityClusterLocal)},
			wantService: "cluster-local",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := workload{kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "fn", container: "function",
				image: "registry.example/fn@" + testDigest, port: 8080, meta: tc.meta, readiness: httpPath(PathReady, 8080)}
			svc := w.service()
			if got := svc.Labels[key]; got != tc.wantService {
				t.Errorf("%s\nService label %s: want %q, got %q", tc.reason, key, tc.wantService, got)
			}
			if got, ok := svc.Spec.Template.Labels[key]; ok {
				t.Errorf("%s\nthe revision template has label %s=%q; it means nothing there", tc.reason, key, got)
			}
		})
	}
}
