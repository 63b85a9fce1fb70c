package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTreeFiles(t *testing.T) {
	src := t.TempDir()
	for name, body := range map[string]string{"a.yaml": "a", "sub/b.yaml": "b"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.yaml", filepath.Join(src, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	type want struct {
		files []file
		err   bool
	}
	cases := map[string]struct {
		reason string
		trees  []string
		want   want
	}{
		"Folder": {
			reason: "Every regular file below SRC goes below DST, readable by all, whatever its mode on this machine; a link is no file of the tree.",
			trees:  []string{src + ":/crds"},
			want: want{files: []file{
				{path: "crds/a.yaml", mode: 0o644, data: []byte("a")},
				{path: "crds/sub/b.yaml", mode: 0o644, data: []byte("b")},
			}},
		},
		"RelativeDestination": {
			reason: "A destination must be absolute: the image has no working folder to be relative to.",
			trees:  []string{src + ":crds"},
			want:   want{err: true},
		},
		"NoDestination": {
			reason: "SRC alone is refused, not put at the root.",
			trees:  []string{src},
			want:   want{err: true},
		},
		"MissingFolder": {
			reason: "A folder that does not exist is an error, not an empty tree.",
			trees:  []string{filepath.Join(src, "nothing") + ":/crds"},
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := treeFiles(tc.trees)
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\ntreeFiles(...): error %v, want error %t", tc.reason, err, tc.want.err)
			}
			if diff := cmp.Diff(tc.want.files, got, cmp.AllowUnexported(file{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ntreeFiles(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
