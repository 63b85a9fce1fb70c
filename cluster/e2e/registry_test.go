//go:build e2e

package e2e

import (
	"context"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

// packagePath is where the packages are published; an ImageConfig points it
// at the test's registry, as a platform points it at a mirror.
const packagePath = "xpkg.crossplane.io/knative-lambda"

// packageVersion is the tag make xpkg builds.
const packageVersion = "v0.1.0"

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
	out := filepath.Join(repo, "_output")
	for name, file := range map[string]string{
		"provider-knative-lambda":      filepath.Join(out, "linux_"+runtime.GOARCH, "provider-knative-lambda.xpkg"),
		"function-knative-lambda":      filepath.Join(out, "linux_"+runtime.GOARCH, "function-knative-lambda.xpkg"),
		"configuration-knative-lambda": filepath.Join(out, "configuration-knative-lambda.xpkg"),
	} {
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("%v: run make e2e, which builds the packages", err)
		}
		cmd := exec.CommandContext(ctx, bin(t, "crossplane"), "xpkg", "push", "-f", file, host+"/knative-lambda/"+name+":"+packageVersion)
		cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile, "DOCKER_CONFIG="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("crossplane xpkg push %s: %v\n%s", name, err, b)
		}
	}
}
