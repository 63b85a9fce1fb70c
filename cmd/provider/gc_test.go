package main

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetGCPercent(t *testing.T) {
	cases := map[string]struct {
		reason string
		env    map[string]string
		want   int
	}{
		"Unset": {
			reason: "Without GOGC the collector's target is gcPercent.",
			want:   gcPercent,
		},
		"Set": {
			reason: "GOGC, as the runtime read it at start, is left as it is.",
			env:    map[string]string{"GOGC": "100"},
			want:   7,
		},
		"SetEmpty": {
			reason: "An empty GOGC is the runtime's to read, not ours to replace.",
			env:    map[string]string{"GOGC": ""},
			want:   7,
		},
	}
	was := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(was)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// A target no default has, so that one left alone shows.
			debug.SetGCPercent(7)
			setGCPercent(func(k string) (string, bool) {
				v, ok := tc.env[k]
				return v, ok
			})
			if diff := cmp.Diff(tc.want, debug.SetGCPercent(-1)); diff != "" {
				t.Errorf("\n%s\nsetGCPercent(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
