package workload

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
)

// createAnnotations are what the managed reconciler writes of its own
// creates.
var createAnnotations = []string{
	meta.AnnotationKeyExternalCreatePending,
	meta.AnnotationKeyExternalCreateSucceeded,
	meta.AnnotationKeyExternalCreateFailed,
}

// desiredStateChanged passes what crossplane-runtime's
// resource.DesiredStateChanged passes, except a change of the annotation
// that says a create succeeded, which that predicate leaves to the managed
// reconciler's requeue after the create: here the created objects wake
// their resource instead (see createdReconciler), and the annotation is no
// more a change of desired state than the pending and failed ones it
// already ignores.
func desiredStateChanged() predicate.Predicate {
	return predicate.Or(
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld != nil && e.ObjectNew != nil && !sameButCreates(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
		}},
		predicate.LabelChangedPredicate{},
		predicate.GenerationChangedPredicate{},
	)
}

// sameButCreates is true when two annotation maps hold the same annotations
// besides createAnnotations.
func sameButCreates(was, is map[string]string) bool {
	n := 0
	for k, v := range was {
		if slices.Contains(createAnnotations, k) {
			continue
		}
		if w, ok := is[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range is {
		if !slices.Contains(createAnnotations, k) {
			n--
		}
	}
	return n == 0
}
