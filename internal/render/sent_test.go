package render

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// TestSent checks that the provider's conversion of a rendered object
// (the API machinery's unstructured converter) and the function's (JSON)
// send the same fields of every golden object, and nothing a server sets.
func TestSent(t *testing.T) {
	for _, c := range goldenCases(t) {
		for _, o := range c.objects.All() {
			applied, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				t.Fatalf("%s %s: ToUnstructured: %v", c.name, Key(o), err)
			}
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatalf("%s %s: json.Marshal: %v", c.name, Key(o), err)
			}
			composed := map[string]any{}
			if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &composed); err != nil {
				t.Fatalf("%s %s: %v", c.name, Key(o), err)
			}
			for _, m := range []map[string]any{applied, composed} {
				maps.DeleteFunc(m, func(k string, _ any) bool { return !Sent(k) })
			}
			if diff := cmp.Diff(applied, composed); diff != "" {
				t.Errorf("%s %s: the provider's and the function's conversions differ: -applied +composed:\n%s", c.name, Key(o), diff)
			}
			if ts := serverSet(applied, ""); ts != "" {
				t.Errorf("%s %s: sends %s, which the server sets", c.name, Key(o), ts)
			}
		}
	}
}

// serverSet is the path of a field in m that only a server sets: a status
// or a creationTimestamp, at any depth.
func serverSet(m map[string]any, at string) string {
	for k, v := range m {
		if k == "status" && at == "" || k == "creationTimestamp" {
			return at + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			if p := serverSet(sub, at+"."+k); p != "" {
				return p
			}
		}
	}
	return ""
}
