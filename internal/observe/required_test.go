package observe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestRequiredOf(t *testing.T) {
	optional := true
	secretKey := func(name, key string, opt *bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt}}
	}
	configMapKey := func(name, key string, opt *bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt}}
	}
	cases := map[string]struct {
		reason string
		spec   corev1.PodSpec
		want   []Required
	}{
		"None": {
			reason: "A pod that reads no Secret or ConfigMap needs none.",
			spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "user-container", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}}},
		},
		"Every kind": {
			reason: "Pull secrets, environment variables, environment sources and volumes each need their Secret or ConfigMap; a volume that mounts some keys needs each of them, and is named by where it is mounted.",
			spec: corev1.PodSpec{
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
				InitContainers:   []corev1.Container{{Name: "init", Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: secretKey("init-token", "token", nil)}}}},
				Containers: []corev1.Container{{
					Name: "user-container",
					Env: []corev1.EnvVar{
						{Name: "AI_API_KEY", ValueFrom: secretKey("openai", "api-key", nil)},
						{Name: "LEVEL", ValueFrom: configMapKey("settings", "level", nil)},
					},
					EnvFrom: []corev1.EnvFromSource{
						{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
						{Prefix: "APP_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "volume-0", MountPath: "/var/run/secrets/tls"}},
				}},
				Volumes: []corev1.Volume{
					{Name: "volume-0", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls", Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "cert"}, {Key: "tls.key", Path: "key"}}}}},
					{Name: "unmounted", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ca"}}}},
				},
			},
			want: []Required{
				{Kind: KindSecret, Name: "registry", Use: "image pull secret"},
				{Kind: KindSecret, Name: "init-token", Key: "token", Use: "environment variable TOKEN"},
				{Kind: KindSecret, Name: "openai", Key: "api-key", Use: "environment variable AI_API_KEY"},
				{Kind: KindConfigMap, Name: "settings", Key: "level", Use: "environment variable LEVEL"},
				{Kind: KindSecret, Name: "settings", Use: "environment of container user-container"},
				{Kind: KindConfigMap, Name: "app", Use: "environment of container user-container"},
				{Kind: KindSecret, Name: "tls", Key: "tls.crt", Use: "volume at /var/run/secrets/tls"},
				{Kind: KindSecret, Name: "tls", Key: "tls.key", Use: "volume at /var/run/secrets/tls"},
				{Kind: KindConfigMap, Name: "ca", Use: "volume unmounted"},
			},
		},
		"Optional": {
			reason: "A pod starts without a Secret or ConfigMap it marks optional.",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "c",
					Env: []corev1.EnvVar{
						{Name: "MAYBE", ValueFrom: secretKey("maybe", "k", &optional)},
						{Name: "PERHAPS", ValueFrom: configMapKey("perhaps", "k", &optional)},
					},
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "perhaps"}, Optional: &optional}}},
				}},
				Volumes: []corev1.Volume{
					{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "maybe", Optional: &optional}}},
					{Name: "w", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "perhaps"}, Optional: &optional}}},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RequiredOf(tc.spec)); diff != "" {
				t.Errorf("\n%s\nRequiredOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
