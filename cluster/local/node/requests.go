package node

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// systemCPUShare divides the CPU the node's system components request.
// Knative's alone request three quarters of a two-core node, Crossplane's a
// tenth more: with a few builds and Revisions at once, the scheduler then
// found no room and Knative failed the Revision Unschedulable, which it
// never took back once the pod ran. Their limits are kept.
const systemCPUShare = 10

// lighten divides the CPU requests of the containers of objs' Deployments
// by systemCPUShare.
func lighten(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	return eachContainer(objs, func(c map[string]any) {
		if cpu, ok, _ := unstructured.NestedString(c, "resources", "requests", "cpu"); ok {
			_ = unstructured.SetNestedField(c, lighter(cpu), "resources", "requests", "cpu")
		}
	})
}

// lighter is a CPU quantity divided by systemCPUShare, at least 1m; one
// that does not parse is kept, for the API server to refuse.
func lighter(cpu string) string {
	q, err := resource.ParseQuantity(cpu)
	if err != nil {
		return cpu
	}
	return resource.NewMilliQuantity(max(q.MilliValue()/systemCPUShare, 1), resource.DecimalSI).String()
}
