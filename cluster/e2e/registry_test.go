//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// packagePath is where the packages are published; an ImageConfig points it
// at the test's registry, as a platform points it at a mirror.
const packagePath = "xpkg.crossplane.io/knative-lambda"

// packageVersion is the tag make xpkg builds.
const packageVersion = "v0.1.0"

// A certAuthority signs certificates for a test.
type certAuthority struct {
	cert *x509.Certificate
	key  any
	pem  []byte
}

// newCA makes a certificate authority for one test.
func newCA(t *testing.T) certAuthority {
	t.Helper()
	der, key := sign(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "e2e test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return certAuthority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a server certificate for localhost and 127.0.0.1, and
// returns it and its key as PEM.
func (ca certAuthority) issue(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	der, key := sign(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca.cert, ca.key)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// sign makes a key and a certificate of tmpl for it, valid for the hour
// around now, signed by parent with parentKey, or by itself when parent is
// nil; it returns the certificate's DER and the key.
func sign(t *testing.T, tmpl, parent *x509.Certificate, parentKey any) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// startRegistry serves an OCI registry on loopback over TLS, with a
// certificate of a test CA whose PEM file it returns with the registry's
// host:port.
func startRegistry(t *testing.T, dir string) (host, caFile string) {
	t.Helper()
	ca := newCA(t)
	certPEM, keyPEM := ca.issue(t, "registry")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(dir, "registry-ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
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
