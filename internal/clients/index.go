package clients

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// IndexOwner is the name of the informer index that finds the objects
// render made for one resource. Without it a resource's objects are found
// by a label selector, which the cache answers by matching every object of
// the namespace: at 10,000 functions in one namespace that matching was two
// thirds of the provider's CPU.
const IndexOwner = "lambda.m.crossplane.io/owner"

// OwnerKey is a resource's key in IndexOwner: its kind and name.
func OwnerKey(kind, name string) string { return kind + "/" + name }

// ownerOf is the key of the resource whose labels o carries; none when
// render did not make o.
func ownerOf(o client.Object) []string {
	l := o.GetLabels()
	if l[render.LabelManagedBy] != render.ManagedBy || l[render.LabelKind] == "" || l[render.LabelResource] == "" {
		return nil
	}
	return []string{OwnerKey(l[render.LabelKind], l[render.LabelResource])}
}

// IndexOwned adds IndexOwner to a cache's informers of each kind and says
// which kinds have it. A kind the cluster does not serve (Knative not
// installed yet) is left without, and its objects are found by labels as
// before.
func IndexOwned(ctx context.Context, fi client.FieldIndexer, kinds map[string]client.Object) map[string]bool {
	indexed := map[string]bool{}
	for kind, o := range kinds {
		indexed[kind] = fi.IndexField(ctx, o, IndexOwner, ownerOf) == nil
	}
	return indexed
}
