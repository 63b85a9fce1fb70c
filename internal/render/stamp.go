package render

import (
	"bytes"
	"encoding/json"
	"hash"
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// AnnotationRendered holds a hash of everything else render sets on an
// object. A live object may hold every field its desired object sets and
// still carry one an earlier apply set and the spec no longer wants (a label
// or annotation taken out of workload, a scaling bound unset); only the hash
// tells the two apart without the object's managed fields, which the
// provider's caches drop. An apply of the new object, by the field manager
// that applied the old, then removes what was dropped.
const AnnotationRendered = v1alpha1.Group + "/rendered"

// renderedHashLen is how many hex digits of the hash AnnotationRendered
// holds: 64 bits, so two renders of one object never collide in practice.
const renderedHashLen = 16

const errStamp = "cannot hash a rendered object"

// stamped sets AnnotationRendered on every object render returns.
func stamped(out *Objects, err error) (*Objects, error) {
	if err != nil {
		return nil, err
	}
	for _, o := range out.All() {
		if err := stamp(o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func stamp(o client.Object) error {
	w := borrowHasher()
	defer w.done()
	if err := json.NewEncoder(jsonHash{w.h}).Encode(o); err != nil {
		return errors.Wrap(err, errStamp)
	}
	// A map of its own, with room for the stamp: render changes no map it
	// was given, such as a spec's annotations.
	was := o.GetAnnotations()
	a := make(map[string]string, len(was)+1)
	maps.Copy(a, was)
	a[AnnotationRendered] = w.hexSum(renderedHashLen / 2)
	o.SetAnnotations(a)
	return nil
}

// A jsonHash hashes what a json.Encoder writes but the newline Encode ends
// a value with, which is exactly what json.Marshal returns: the encoder
// writes from its pooled buffer, where Marshal copies every object's JSON
// only for it to be hashed and dropped.
type jsonHash struct{ hash.Hash }

func (h jsonHash) Write(b []byte) (int, error) {
	_, _ = h.Hash.Write(bytes.TrimSuffix(b, []byte("\n")))
	return len(b), nil
}
