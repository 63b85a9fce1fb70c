package observe

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// Blank is an empty object of a rendered object's kind, to read its live
// copy into: nothing of the rendered one is left where the live copy has no
// value. An unstructured object keeps its kind, which is all it is.
func Blank(o kube.Object) kube.Object {
	if _, isUnstructured := o.(*unstructured.Unstructured); isUnstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
		return u
	}
	return reflect.New(reflect.TypeOf(o).Elem()).Interface().(kube.Object) //nolint:forcetypeassert // A new value of an object's type is one.
}
