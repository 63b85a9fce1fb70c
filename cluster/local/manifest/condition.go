package manifest

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Condition is an object's condition of a type, as its status holds it:
// type, status, reason and message; false when it has none.
func Condition(u *unstructured.Unstructured, typ string) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m, true
		}
	}
	return nil, false
}
