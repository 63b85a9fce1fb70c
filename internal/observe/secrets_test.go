package observe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestRequiredSecrets(t *testing.T) {
	optional := true
	keyRef := func(name, key string, opt *bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt}}
	}
	cases := map[string]struct {
		reason string
		spec   corev1.PodSpec
		want   []SecretRef
	}{
		"None": {
			reason: "A pod that reads no Secret needs none.",
			spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "user-container", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}}},
		},
		"Every kind": {
			reason: "Pull secrets, environment variables, environment sources and volumes each need their Secret.",
			spec: corev1.PodSpec{
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
				InitContainers:   []corev1.Container{{Name: "init", Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: keyRef("init-token", "token", nil)}}}},
				Containers: []corev1.Container{{
					Name:    "user-container",
					Env:     []corev1.EnvVar{{Name: "AI_API_KEY", ValueFrom: keyRef("openai", "api-key", nil)}},
					EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
				}},
				Volumes: []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}},
			},
			want: []SecretRef{
				{Name: "registry", Use: "image pull secret"},
				{Name: "init-token", Key: "token", Use: "environment variable TOKEN"},
				{Name: "openai", Key: "api-key", Use: "environment variable AI_API_KEY"},
				{Name: "settings", Use: "environment of container user-container"},
				{Name: "tls", Use: "volume certs"},
			},
		},
		"Optional": {
			reason: "A pod starts without a Secret it marks optional.",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "MAYBE", ValueFrom: keyRef("maybe", "k", &optional)}}}},
				Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "maybe", Optional: &optional}}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RequiredSecrets(tc.spec)); diff != "" {
				t.Errorf("\n%s\nRequiredSecrets(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
