package render

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/crossplane/function-sdk-go/errors"
	corev1 "k8s.io/api/core/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
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

// An EncodedFn is lent the JSON of each object render stamps, as the stamp
// hashed it: everything but the stamp, which the object carries by then.
// A caller that sends the objects as JSON need not encode them again. The
// strings of the JSON that render wrote from its runtime files are in
// verbatim, in order, so that the caller need not unescape them either. The
// bytes and verbatim are valid only during the call.
type EncodedFn func(o kube.Object, json []byte, verbatim []Verbatim) error

// A Verbatim is a string in the JSON an EncodedFn is lent: its text, and
// where its JSON starts and ends, quotes and all.
type Verbatim struct {
	At, End int
	Text    string
}

// stamped sets AnnotationRendered on every object render returns, and lends
// each object's JSON to lend, when it is set.
func stamped(out *Objects, err error, lend EncodedFn) (*Objects, error) {
	if err != nil {
		return nil, err
	}
	if err := stampEach(out.All(), lend); err != nil {
		return nil, err
	}
	return out, nil
}

// stampEach sets AnnotationRendered on each object, and lends its JSON to
// lend, when it is set.
func stampEach(objs []kube.Object, lend EncodedFn) error {
	for _, o := range objs {
		if err := stamp(o, lend); err != nil {
			return err
		}
	}
	return nil
}

func stamp(o kube.Object, lend EncodedFn) error {
	w := borrowHasher()
	defer w.done()
	hashed := withoutCreators(o)
	h := &jsonHash{hasher: w, keep: lend != nil && hashed == o}
	w.json, w.verbatim = w.json[:0], w.verbatim[:0]
	if err := encodeJSON(h, hashed); err != nil {
		return errors.Wrap(err, errStamp)
	}
	if lend != nil && hashed != o {
		b, err := json.Marshal(o)
		if err != nil {
			return errors.Wrap(err, errStamp)
		}
		// Into the pooled buffer, which keeps the room a build context's
		// ConfigMap grew it to for the next stamp.
		w.json = append(w.json[:0], b...)
	}
	// A map of its own, with room for the stamp: render changes no map it
	// was given, such as a spec's annotations.
	was := o.GetAnnotations()
	a := make(map[string]string, len(was)+1)
	maps.Copy(a, was)
	a[AnnotationRendered] = w.hexSum(renderedHashLen / 2)
	o.SetAnnotations(a)
	if lend == nil {
		return nil
	}
	return lend(o, w.json, w.verbatim)
}

// withoutCreators is o without the annotation by which its resource says it
// creates a Broker, which its stamp leaves out: every creator of a shared
// Broker renders it alike but for that, and creators whose stamps differed
// would take the Broker from each other at every poll. It is o itself
// when there is none.
func withoutCreators(o kube.Object) kube.Object {
	b, ok := o.(*eventingv1.Broker)
	if !ok || len(Creators(b)) == 0 {
		return o
	}
	b = b.DeepCopy()
	maps.DeleteFunc(b.Annotations, func(k, _ string) bool { return isCreator(k) })
	return b
}

// encodeJSON writes o's JSON to h as json.Marshal returns it. A ConfigMap's
// data may be written after the rest only where binary data, which would
// come after them, are not there to follow.
func encodeJSON(h *jsonHash, o kube.Object) error {
	if cm, ok := o.(*corev1.ConfigMap); ok && len(cm.Data) > 0 && len(cm.BinaryData) == 0 {
		return encodeConfigMap(h, cm)
	}
	return json.NewEncoder(h).Encode(o)
}

// A jsonHash hashes what a json.Encoder writes but the newline Encode ends
// a value with, which is exactly what json.Marshal returns: the encoder
// writes from its pooled buffer, where Marshal copies every object's JSON
// only for it to be hashed and dropped. It keeps a copy in the hasher's own
// buffer when asked to.
type jsonHash struct {
	*hasher
	keep bool
}

// Write takes what a json.Encoder writes: a whole value and a newline.
func (h *jsonHash) Write(b []byte) (int, error) {
	h.add(bytes.TrimSuffix(b, []byte("\n")))
	return len(b), nil
}

// add hashes b, and keeps it after what was kept when asked to.
func (h *jsonHash) add(b []byte) {
	_, _ = h.h.Write(b)
	if h.keep {
		h.json = append(h.json, b...)
	}
}

// addVerbatim is add for text's JSON, b, noted as verbatim when kept.
func (h *jsonHash) addVerbatim(b []byte, text string) {
	if h.keep {
		h.verbatim = append(h.verbatim, Verbatim{At: len(h.json), End: len(h.json) + len(b), Text: text})
	}
	h.add(b)
}

// addString is add for a string, which it does not copy to hash.
func (h *jsonHash) addString(s string) {
	h.write(s)
	if h.keep {
		h.json = append(h.json, s...)
	}
}
