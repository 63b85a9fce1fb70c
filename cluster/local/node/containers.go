package node

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// eachContainer calls change with each container of objs' Deployments, and
// keeps what it changed.
func eachContainer(objs []*unstructured.Unstructured, change func(container map[string]any)) []*unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok {
				change(c)
			}
		}
		_ = unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
	}
	return objs
}
