// Package knativetest turns the wire form of Knative's kinds into Knative's
// own types and back, for the tests that run Knative's validation on what
// render makes and for the play of Knative's controllers, which writes
// status with Knative's own methods. The binaries never import it: its
// point is Knative's packages, which they leave out.
package knativetest

import (
	"bytes"
	"encoding/json"
	"reflect"

	kneventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	knsourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

const (
	errEncode = "cannot encode the object"
	errDecode = "cannot decode the object into the other form"
	errFmtNot = "%T is not a Broker, Trigger, PingSource, Service or Revision of the wire form"
)

// Convert reads from's JSON into to, a pointer, refusing any field to has
// no place for: from and to are one kind, one in the wire form and one in
// Knative's own types. What to held before is gone, as a field from left
// out when empty must be.
func Convert(from, to any) error {
	raw, err := json.Marshal(from)
	if err != nil {
		return errors.Wrap(err, errEncode)
	}
	reflect.ValueOf(to).Elem().SetZero()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return errors.Wrap(dec.Decode(to), errDecode)
}

// Own is Knative's own object for a Broker, Trigger, PingSource, Service or
// Revision in the wire form, holding the same fields.
func Own(o client.Object) (client.Object, error) {
	var own client.Object
	switch o.(type) {
	case *eventingv1.Broker:
		own = &kneventingv1.Broker{}
	case *eventingv1.Trigger:
		own = &kneventingv1.Trigger{}
	case *sourcesv1.PingSource:
		own = &knsourcesv1.PingSource{}
	case *servingv1.Service:
		own = &knservingv1.Service{}
	case *servingv1.Revision:
		own = &knservingv1.Revision{}
	default:
		return nil, errors.Errorf(errFmtNot, o)
	}
	return own, Convert(o, own)
}

// In runs act on Knative's own form of a wire-form object, such as a status
// method of Knative's, and writes what act changed back into the object.
// The wire form holds every field of Knative's (the knative package's test
// says so), so an error here is a bug, and In panics with it.
func In[K any](wire any, act func(*K)) {
	own := As[K](wire)
	act(own)
	if err := Convert(own, wire); err != nil {
		panic(err)
	}
}

// As is o in its other form, K: Knative's own type for a wire-form value,
// the wire form for one of Knative's. Each form holds every field of the
// other, so an error here is a bug, and As panics with it.
func As[K any](o any) *K {
	k := new(K)
	if err := Convert(o, k); err != nil {
		panic(err)
	}
	return k
}
