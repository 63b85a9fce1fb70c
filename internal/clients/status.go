package clients

import (
	"bytes"
	"context"
	"encoding/json"
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

// sameStatus compares the status fields of two objects of one kind in their
// JSON form, which is what an update would send.
func sameStatus(a, b runtime.Object) bool {
	sa, errA := statusOf(a)
	sb, errB := statusOf(b)
	return errA == nil && errB == nil && bytes.Equal(sa, sb)
}

// statusOf is the JSON of an object's status. A typed object's Status field
// alone is encoded: converting whole objects to maps to compare their
// statuses was a fifteenth of what the provider allocated in a rush of
// creates.
func statusOf(o runtime.Object) ([]byte, error) {
	if v := reflect.ValueOf(o); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		if s := v.Elem().FieldByName("Status"); s.Kind() == reflect.Struct {
			return json.Marshal(s.Addr().Interface())
		}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	return json.Marshal(u["status"])
}
