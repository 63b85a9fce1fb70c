package clients

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NoopStatusSkipper wraps a manager's client so a status update that would
// change nothing is not sent. The managed reconciler updates status at the
// end of every reconcile; without this, a resource at rest would cost one
// write request per poll.
type NoopStatusSkipper struct {
	client.Client
}

// Status returns a writer that skips updates of an unchanged status.
func (c NoopStatusSkipper) Status() client.SubResourceWriter {
	return noopStatusWriter{SubResourceWriter: c.Client.Status(), reader: c.Client}
}

type noopStatusWriter struct {
	client.SubResourceWriter
	reader client.Reader
}

// Update sends the update unless the object read through the client (its
// cache, for a manager's client) has the same status and generation.
func (w noopStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	current, ok := obj.DeepCopyObject().(client.Object)
	if ok && w.reader.Get(ctx, client.ObjectKeyFromObject(obj), current) == nil && current.GetResourceVersion() == obj.GetResourceVersion() && sameStatus(current, obj) {
		return nil
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// sameStatus compares the status fields of two objects of one kind.
func sameStatus(a, b runtime.Object) bool {
	ua, errA := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	ub, errB := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	return errA == nil && errB == nil && reflect.DeepEqual(ua["status"], ub["status"])
}
