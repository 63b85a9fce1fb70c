package render

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// volumes converts the spec's volumes into the pod's volumes and the
// container's mounts, read-only as Knative requires of Secrets and
// ConfigMaps. They are named by position: the names are the pod's alone.
func volumes(in []v1alpha1.Volume) ([]corev1.Volume, []corev1.VolumeMount) {
	if len(in) == 0 {
		return nil, nil
	}
	vols := make([]corev1.Volume, 0, len(in))
	mounts := make([]corev1.VolumeMount, 0, len(in))
	for i, v := range in {
		name := "volume-" + strconv.Itoa(i)
		vol := corev1.Volume{Name: name}
		if s := v.Secret; s != nil {
			vol.Secret = &corev1.SecretVolumeSource{SecretName: string(s.Name), Items: keysToPaths(s.Items), Optional: s.Optional}
		}
		if c := v.ConfigMap; c != nil {
			vol.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: string(c.Name)}, Items: keysToPaths(c.Items), Optional: c.Optional}
		}
		vols = append(vols, vol)
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: v.Path, ReadOnly: true})
	}
	return vols, mounts
}

func keysToPaths(in []v1alpha1.KeyToPath) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, k := range in {
		out = append(out, corev1.KeyToPath{Key: k.Key, Path: k.Path})
	}
	return out
}

// envFrom converts the spec's whole Secrets and ConfigMaps of variables.
func envFrom(in []v1alpha1.EnvFromSource) []corev1.EnvFromSource {
	var out []corev1.EnvFromSource
	for _, e := range in {
		f := corev1.EnvFromSource{Prefix: e.Prefix}
		if r := e.SecretRef; r != nil {
			f.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: string(r.Name)}, Optional: r.Optional}
		}
		if r := e.ConfigMapRef; r != nil {
			f.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: string(r.Name)}, Optional: r.Optional}
		}
		out = append(out, f)
	}
	return out
}
