package observe

import (
	corev1 "k8s.io/api/core/v1"
)

// Kinds of the objects a pod may need from its namespace.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// A Required is a Secret or ConfigMap a pod cannot start or pull its image
// without.
type Required struct {
	// Kind is KindSecret or KindConfigMap.
	Kind string
	// Name of the object.
	Name string
	// Key the pod reads; empty when it needs the object as a whole.
	Key string
	// Use says what the pod needs it for.
	Use string
}

// RequiredOf lists the Secrets and ConfigMaps a pod spec needs, in the order
// it names them: its image pull secrets, what its containers' environment
// reads, and its volumes with each key they mount, unless marked optional.
func RequiredOf(spec corev1.PodSpec) []Required {
	var refs []Required
	for _, s := range spec.ImagePullSecrets {
		refs = append(refs, Required{Kind: KindSecret, Name: s.Name, Use: "image pull secret"})
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, e := range c.Env {
			r, use := e.ValueFrom, "environment variable "+e.Name
			switch {
			case r == nil:
			case r.SecretKeyRef != nil && !isTrue(r.SecretKeyRef.Optional):
				refs = append(refs, Required{Kind: KindSecret, Name: r.SecretKeyRef.Name, Key: r.SecretKeyRef.Key, Use: use})
			case r.ConfigMapKeyRef != nil && !isTrue(r.ConfigMapKeyRef.Optional):
				refs = append(refs, Required{Kind: KindConfigMap, Name: r.ConfigMapKeyRef.Name, Key: r.ConfigMapKeyRef.Key, Use: use})
			}
		}
		use := "environment of container " + c.Name
		for _, e := range c.EnvFrom {
			switch {
			case e.SecretRef != nil && !isTrue(e.SecretRef.Optional):
				refs = append(refs, Required{Kind: KindSecret, Name: e.SecretRef.Name, Use: use})
			case e.ConfigMapRef != nil && !isTrue(e.ConfigMapRef.Optional):
				refs = append(refs, Required{Kind: KindConfigMap, Name: e.ConfigMapRef.Name, Use: use})
			}
		}
	}
	mounts := mountPaths(spec)
	for _, v := range spec.Volumes {
		use := "volume " + v.Name
		if p := mounts[v.Name]; p != "" {
			use = "volume at " + p
		}
		switch {
		case v.Secret != nil && !isTrue(v.Secret.Optional):
			refs = append(refs, volumeKeys(KindSecret, v.Secret.SecretName, use, v.Secret.Items)...)
		case v.ConfigMap != nil && !isTrue(v.ConfigMap.Optional):
			refs = append(refs, volumeKeys(KindConfigMap, v.ConfigMap.Name, use, v.ConfigMap.Items)...)
		}
	}
	return refs
}

// volumeKeys is what a volume needs: each key it mounts, or the whole object
// when it mounts every key.
func volumeKeys(kind, name, use string, items []corev1.KeyToPath) []Required {
	if len(items) == 0 {
		return []Required{{Kind: kind, Name: name, Use: use}}
	}
	refs := make([]Required, 0, len(items))
	for _, it := range items {
		refs = append(refs, Required{Kind: kind, Name: name, Key: it.Key, Use: use})
	}
	return refs
}

// mountPaths maps each volume to where a container first mounts it, which
// is what the user named; the volume's own name is render's.
func mountPaths(spec corev1.PodSpec) map[string]string {
	paths := map[string]string{}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if paths[m.Name] == "" {
				paths[m.Name] = m.MountPath
			}
		}
	}
	return paths
}

func isTrue(b *bool) bool { return b != nil && *b }
