package render

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestNoServiceAccountToken checks that no pod render makes, build or
// workload, has a service account token to read: code that opens
// /var/run/secrets/kubernetes.io/serviceaccount/token finds nothing, so a
// function cannot act as its namespace's service account.
func TestNoServiceAccountToken(t *testing.T) {
	cases := goldenCases(t)
	pods := 0
	for _, tc := range cases {
		specs := map[string]corev1.PodSpec{}
		if svc := tc.objects.Service; svc != nil {
			specs["Service"] = svc.Spec.Template.Spec.PodSpec
		}
		if job := tc.objects.BuildJob; job != nil {
			specs["build Job"] = job.Spec.Template.Spec
		}
		for what, spec := range specs {
			pods++
			if a := spec.AutomountServiceAccountToken; a == nil || *a {
				t.Errorf("%s: the %s's pod does not turn off the service account token (automountServiceAccountToken %v)", tc.name, what, a)
			}
			for _, v := range spec.Volumes {
				if p := v.Projected; p != nil {
					for _, s := range p.Sources {
						if s.ServiceAccountToken != nil {
							t.Errorf("%s: the %s's pod projects a service account token in volume %s", tc.name, what, v.Name)
						}
					}
				}
			}
			for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
				for _, m := range c.VolumeMounts {
					if strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io") {
						t.Errorf("%s: container %s of the %s mounts %s", tc.name, c.Name, what, m.MountPath)
					}
				}
			}
		}
	}
	if pods == 0 {
		t.Fatal("the golden cases render no pod; this test would prove nothing")
	}
}
