package render

import (
	"slices"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// Replaceable returns the desired objects less each that Knative refuses to
// change into: a Trigger whose live copy, as live returns it (nil for
// none), listens on another Broker, which Knative's webhook holds
// immutable. Left out of what is applied, the live copy is deleted as any
// object no longer desired is, and a later pass, which finds it gone,
// creates it anew. desired is changed in place only when one is left out.
func Replaceable(desired []kube.Object, live func(kube.Object) kube.Object) []kube.Object {
	return slices.DeleteFunc(desired, func(o kube.Object) bool {
		t, ok := o.(*eventingv1.Trigger)
		if !ok {
			return false
		}
		l, ok := live(o).(*eventingv1.Trigger)
		return ok && l.Spec.Broker != t.Spec.Broker
	})
}
