package observe

import (
	corev1 "k8s.io/api/core/v1"
)

// A SecretRef is a Secret a pod cannot start or pull its image without.
type SecretRef struct {
	// Name of the Secret.
	Name string
	// Key the pod reads; empty when it needs the Secret as a whole.
	Key string
	// Use says what the pod needs it for.
	Use string
}

// RequiredSecrets lists the Secrets a pod spec needs, in the order it names
// them: its image pull secrets, and what its containers' environment and its
// volumes read, unless marked optional.
func RequiredSecrets(spec corev1.PodSpec) []SecretRef {
	var refs []SecretRef
	for _, s := range spec.ImagePullSecrets {
		refs = append(refs, SecretRef{Name: s.Name, Use: "image pull secret"})
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, e := range c.Env {
			if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil && !isTrue(r.SecretKeyRef.Optional) {
				refs = append(refs, SecretRef{Name: r.SecretKeyRef.Name, Key: r.SecretKeyRef.Key, Use: "environment variable " + e.Name})
			}
		}
		for _, e := range c.EnvFrom {
			if r := e.SecretRef; r != nil && !isTrue(r.Optional) {
				refs = append(refs, SecretRef{Name: r.Name, Use: "environment of container " + c.Name})
			}
		}
	}
	for _, v := range spec.Volumes {
		if s := v.Secret; s != nil && !isTrue(s.Optional) {
			refs = append(refs, SecretRef{Name: s.SecretName, Use: "volume " + v.Name})
		}
	}
	return refs
}

func isTrue(b *bool) bool { return b != nil && *b }
