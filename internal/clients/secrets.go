package clients

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The provider reads a Secret only when a resource names it: a provider
// config's kubeconfig, or a source's credentials. It reads each one with a
// GET, never from an informer, so it needs no cluster-wide list or watch of
// Secrets. package/rbac/secrets-clusterrole.yaml is generated from this
// marker; bind it with a RoleBinding in each namespace the provider serves.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// ClientOptions make a client read Secrets from the API server, not from a
// cache: a cache would list and watch every Secret in the cluster.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}
