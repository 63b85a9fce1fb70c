package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMissing(t *testing.T) {
	cases := map[string]struct {
		reason  string
		desired any
		live    any
		want    []string
	}{
		"ExtraLiveFields": {
			reason:  "Fields only live has, such as server defaults, never count.",
			desired: map[string]any{"spec": map[string]any{"replicas": 1}},
			live:    map[string]any{"spec": map[string]any{"replicas": 1.0, "paused": false}, "status": map[string]any{}},
		},
		"ChangedValue": {
			reason:  "A value someone changed is missing.",
			desired: map[string]any{"spec": map[string]any{"image": "a"}},
			live:    map[string]any{"spec": map[string]any{"image": "b"}},
			want:    []string{".spec.image: want a, got b"},
		},
		"MissingField": {
			reason:  "A field removed from live is missing.",
			desired: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}},
			live:    map[string]any{"metadata": map[string]any{}},
			want:    []string{".metadata.labels: want an object, got <nil>"},
		},
		"NamedListByName": {
			reason:  "Named list elements match by name, wherever another manager put its own.",
			desired: map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}}},
			live:    map[string]any{"env": []any{map[string]any{"name": "INJECTED", "value": "x"}, map[string]any{"name": "A", "value": "1"}}},
		},
		"NamedElementGone": {
			reason:  "A named element removed from live is missing.",
			desired: map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}}},
			live:    map[string]any{"env": []any{}},
			want:    []string{".env: missing name=A"},
		},
		"PlainListByPosition": {
			reason:  "Lists without names compare by position.",
			desired: map[string]any{"args": []any{"--a", "--b"}},
			live:    map[string]any{"args": []any{"--a", "--c"}},
			want:    []string{".args[1]: want --b, got --c"},
		},
		"TypedAgainstMap": {
			reason: "A typed struct compares with its JSON form.",
			desired: struct {
				Port int32 `json:"port"`
			}{Port: 8080},
			live: map[string]any{"port": 8080, "protocol": "TCP"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Missing(tc.desired, tc.live)); diff != "" {
				t.Errorf("\n%s\nMissing(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
