package local

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestWrappersShareVersions checks that tool wrappers built from related
// releases require the same version of every module they share, except
// those listed. A cold machine compiles a package once for every version
// of it that some build selects, so one drifting require makes a cold CI
// run compile the shared dependency tree twice.
func TestWrappersShareVersions(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   string
		differ []string
	}{
		"CrossplaneCLIAndCore": {
			reason: "The CLI of v2.2.1 requires what core v2.4.0 requires, but for the releases themselves and the runtime the CLI's code is written against.",
			a:      "build/crossplane",
			b:      "build/crossplane-core",
			differ: []string{"github.com/crossplane/crossplane/v2", "github.com/crossplane/crossplane-runtime/v2"},
		},
		"KubeControllerManagerAndAPIServer": {
			reason: "Both are the same Kubernetes release.",
			a:      "build/kube-controller-manager",
			b:      "build/kube-apiserver",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := requires(t, tc.a), requires(t, tc.b)
			for _, m := range tc.differ {
				delete(a, m)
			}
			for m, va := range a {
				if vb, ok := b[m]; ok && va != vb {
					t.Errorf("%s\n%s requires %s %s, %s requires %s", tc.reason, tc.a, m, va, tc.b, vb)
				}
			}
		})
	}
}

// requires returns the version that the wrapper module in dir selects for
// each module it requires or replaces.
func requires(t *testing.T, dir string) map[string]string {
	t.Helper()
	file := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(file) //nolint:gosec // A file of this repository.
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]string{}
	for _, r := range f.Require {
		v[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		v[r.Old.Path] = r.New.Path + " " + r.New.Version
	}
	return v
}
