//go:build e2e

package e2e

import (
	"context"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

// startRegistry serves an OCI registry on loopback over TLS, with a
// certificate of a test CA whose PEM file it returns with the registry's
// host:port.
func startRegistry(t *testing.T, dir string) (host, caFile string) {
	t.Helper()
	ca, err := testca.New("e2e test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Serve("registry", registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	caFile = filepath.Join(dir, "registry-ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.Listener.Addr().String(), caFile
}

// pushPackages pushes the packages make xpkg built, for this machine's
// architecture, to the registry with the Crossplane CLI, trusting the
// registry's CA as a platform would its mirror's.
func pushPackages(ctx context.Context, t *testing.T, host, caFile string) {
	t.Helper()
	for name, file := range node.PackageFiles(repo) {
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("%v: run make e2e, which builds the packages", err)
		}
		cmd := exec.CommandContext(ctx, bin(t, "crossplane"), "xpkg", "push", "-f", file, host+"/knative-lambda/"+name+":"+node.PackageVersion)
		cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile, "DOCKER_CONFIG="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("crossplane xpkg push %s: %v\n%s", name, err, b)
		}
	}
}
