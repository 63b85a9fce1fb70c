// Package diff tells whether a live object holds everything a desired object
// sets. Fields the desired object leaves out (server defaults, other
// controllers' fields) never count, so comparing this way only ever compares
// the fields we own.
package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Missing lists, as "path: want X, got Y", every value of desired that live
// does not hold. Lists of objects that have a "name" are matched by name, as
// server-side apply merges them; other lists by position. Both arguments are
// taken in their JSON form, so typed objects and unstructured content
// compare alike, and numbers by value: 3 and 3.0 are the same.
func Missing(desired, live any) []string {
	return missing(jsonForm(desired), jsonForm(live), "")
}

func missing(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, missing(v, g[k], path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want a list, got %v", path, got)}
		}
		var out []string
		for i, v := range w {
			match, where := element(v, g, i)
			if match == nil {
				out = append(out, fmt.Sprintf("%s: missing %s", path, where))
				continue
			}
			out = append(out, missing(v, match, fmt.Sprintf("%s[%s]", path, where))...)
		}
		return out
	}
	if !sameLeaf(want, got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

// sameLeaf compares two values that are neither objects nor lists; numbers
// by value, whatever their Go type.
func sameLeaf(want, got any) bool {
	w, wIsNumber := number(want)
	g, gIsNumber := number(got)
	if wIsNumber && gIsNumber {
		return w == g
	}
	return reflect.DeepEqual(want, got)
}

// number is a JSON number's value.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// element finds the live element a desired list element compares with.
func element(want any, got []any, i int) (any, string) {
	if m, ok := want.(map[string]any); ok {
		if name, ok := m["name"].(string); ok {
			for _, g := range got {
				if gm, ok := g.(map[string]any); ok && gm["name"] == name {
					return g, "name=" + name
				}
			}
			return nil, "name=" + name
		}
	}
	if i < len(got) {
		return got[i], fmt.Sprint(i)
	}
	return nil, fmt.Sprint(i)
}

// jsonForm is what encoding/json decodes a value's JSON into, so that a
// typed struct and a map compare alike. Unstructured content (a map or a
// list) is its own JSON form, but for its numbers' Go types, which
// sameLeaf ignores: the provider compares every object it renders at every
// reconcile, and encoding and decoding what is already content was a third
// of that.
func jsonForm(v any) any {
	switch c := v.(type) {
	case map[string]any, []any:
		return c
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
