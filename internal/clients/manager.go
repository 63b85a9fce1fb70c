package clients

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"

	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// ManagerCacheOptions narrow the manager's cache as TargetCacheOptions do a
// target's, and cache CRDs without their schemas, which the gate does not
// need.
func ManagerCacheOptions() cache.Options {
	o := TargetCacheOptions()
	o.ByObject[&extv1.CustomResourceDefinition{}] = cache.ByObject{Transform: customresourcesgate.TransformStripCRDSchema}
	return o
}

// TargetCacheOptions narrow a target cluster's cache. Build Jobs, their pods,
// ConfigMaps, NetworkPolicies and PingSources are cached only when this
// provider made them, not every one in the cluster, and of pods only
// builds': a function's own pods are never read. No object keeps its managed fields: observe
// compares the fields render sets, and server-side apply needs none sent;
// and the strings objects repeat are kept once (TransformCompact).
func TargetCacheOptions() cache.Options {
	ours := labels.SelectorFromSet(labels.Set{render.LabelManagedBy: render.ManagedBy})
	builds := labels.SelectorFromSet(labels.Set{render.LabelManagedBy: render.ManagedBy, render.LabelComponent: render.ComponentBuild})
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:                {Label: ours},
			&corev1.Pod{}:                 {Label: builds},
			&corev1.ConfigMap{}:           {Label: ours},
			&networkingv1.NetworkPolicy{}: {Label: ours},
			&sourcesv1.PingSource{}:       {Label: ours},
		},
		DefaultTransform: TransformCompact(),
	}
}

// ManagerClient makes the manager's client: status updates that would
// change nothing are not sent, no update carries crossplane-runtime's notes
// of creates, and the resource version of every write is recorded in w.
func ManagerClient(w *Writes) client.NewClientFunc {
	return func(cfg *rest.Config, o client.Options) (client.Client, error) {
		c, err := client.New(cfg, o)
		if err != nil {
			return nil, err
		}
		return NoopStatusSkipper{Client: CreateNotesDropper{Client: NewWriteRecorder(c, w)}}, nil
	}
}
