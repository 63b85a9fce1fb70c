package local

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBinDir(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		env    string
		dir    string
		want   string
	}{
		"Env": {
			reason: "KUBEBUILDER_ASSETS, when set, names the folder.",
			env:    "/opt/assets",
			dir:    root,
			want:   "/opt/assets",
		},
		"Package": {
			reason: "go test runs in a package's folder: the repository's .cache/bin is found above it.",
			dir:    filepath.Join(root, "internal", "render"),
			want:   filepath.Join(root, ".cache", "bin"),
		},
		"WrapperModule": {
			reason: "A wrapper module's go.mod below the repository is not the repository's.",
			dir:    filepath.Join(root, "cluster", "bench", "build", "provider-kubernetes"),
			want:   filepath.Join(root, ".cache", "bin"),
		},
		"Outside": {
			reason: "Outside the repository there is no folder.",
			dir:    t.TempDir(),
			want:   "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBEBUILDER_ASSETS", tc.env)
			t.Chdir(tc.dir)
			if diff := cmp.Diff(tc.want, BinDir()); diff != "" {
				t.Errorf("\n%s\nBinDir(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
