package clients

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpmeta "github.com/crossplane/crossplane-runtime/v2/pkg/meta"
)

// createAnnotations are the notes crossplane-runtime's managed reconciler
// writes of its creates: that one is under way, and that it succeeded or
// failed.
var createAnnotations = []string{
	xpmeta.AnnotationKeyExternalCreatePending,
	xpmeta.AnnotationKeyExternalCreateSucceeded,
	xpmeta.AnnotationKeyExternalCreateFailed,
}

// forgetCreates drops createAnnotations from a managed resource. The
// managed reconciler reads them only of a resource whose external name is
// not deterministic, or after a create within its creation grace period;
// the provider's have deterministic names and no grace period (see
// workload.Setup).
func forgetCreates(o metav1.Object) {
	a := o.GetAnnotations()
	if len(a) == 0 {
		return
	}
	for _, k := range createAnnotations {
		delete(a, k)
	}
	if len(a) == 0 {
		o.SetAnnotations(nil)
	}
}

// A CreateNotesDropper is a manager's client whose updates carry no notes
// of creates, which the provider never reads (see forgetCreates). The
// managed reconciler still writes a resource before each create, with its
// finalizer and a resource version a stale copy fails on; the note it
// wrote after the create took a request of its own, and a pending note
// alone would read as a create cut short.
type CreateNotesDropper struct {
	client.Client
}

// Update updates obj without its notes of creates.
func (c CreateNotesDropper) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	forgetCreates(obj)
	return c.Client.Update(ctx, obj, opts...)
}
