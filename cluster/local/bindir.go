package local

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// modulePath is this repository's module.
const modulePath = "github.com/knative-lambda/provider-knative-lambda"

// BinDir is the folder of the binaries make builds for the tests (etcd,
// kube-apiserver and the rest): $KUBEBUILDER_ASSETS when set, else the
// repository's .cache/bin, found from the working folder up, so that
// go test works from a checkout once make controlplane has run. Empty
// outside the repository.
func BinDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if isOurModule(filepath.Join(dir, "go.mod")) {
			return filepath.Join(dir, ".cache", "bin")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// isOurModule is whether the go.mod at path is this repository's, not one
// of the wrapper modules below it.
func isOurModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close() //nolint:errcheck // Read only.
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.TrimSpace(rest) == modulePath
		}
	}
	return false
}
