//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// The repository, from this folder.
const repo = "../.."

// Crossplane's namespace and the Secrets its init writes.
const (
	xpNamespace  = "crossplane-system"
	secretCA     = "crossplane-root-ca"
	secretClient = "crossplane-tls-client"
	secretServer = "crossplane-tls-server"
)

// start runs a program with the kubeconfig and stops it when the test ends,
// printing its output when the test failed.
func start(t *testing.T, name, kubeconfig string, args ...string) {
	t.Helper()
	logs := &bytes.Buffer{}
	p, err := process.Start(name, args[0], process.Options{Env: []string{"KUBECONFIG=" + kubeconfig}, Out: logs}, args[1:]...)
	stopAtEnd(t, p, err, logs)
}

// stopAtEnd stops a started process when the test ends, and shows its
// output if the test failed.
func stopAtEnd(t *testing.T, p *process.Process, err error, logs *bytes.Buffer) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", p.Name, tail(logs.String(), 8000))
		}
	})
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// bin is a binary make put in .cache/bin.
func bin(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(repo, ".cache", "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%v: run make e2e, which builds it", err)
	}
	return p
}

// build builds a command of this module.
func build(ctx context.Context, t *testing.T, name, pkg string) string {
	t.Helper()
	out, err := process.Build(ctx, repo, name, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// initCrossplane runs crossplane core init: Crossplane's CRDs, its
// namespace's TLS Secrets. Its first run can lose a race with CRD discovery,
// so it runs until it succeeds, three times at most.
func initCrossplane(ctx context.Context, t *testing.T, core, kubeconfig, dir string) {
	t.Helper()
	crds, err := local.ThirdPartyCRDs[2].Path(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	// No webhooks run here; init would apply their configurations from
	// Crossplane's folder without a service to call.
	hooks := filepath.Join(dir, "webhooks")
	if err := os.MkdirAll(hooks, 0o700); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for range 3 {
		cmd := exec.CommandContext(ctx, core, "core", "init", "--cr-ds-path="+crds, "--webhook-configurations-path="+hooks,
			"--tlsca-secret-name="+secretCA, "--tls-client-secret-name="+secretClient, "--tls-server-secret-name="+secretServer)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		if out, err = cmd.CombinedOutput(); err == nil {
			return
		}
	}
	t.Fatalf("crossplane core init: %v\n%s", err, tail(string(out), 4000))
}

// writeSecret writes a Secret's keys as files, as a volume would mount them.
func writeSecret(ctx context.Context, t *testing.T, kube client.Client, name, dir string, keys ...string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: xpNamespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), s.Data[k], 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// functionCerts issues the function a server certificate for localhost from
// the CA crossplane core init made, which Crossplane's client trusts, and
// writes it where function.MTLSCertificates reads it.
func functionCerts(ctx context.Context, t *testing.T, kube client.Client, dir string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: xpNamespace, Name: secretCA}, s); err != nil {
		t.Fatal(err)
	}
	ca, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "function-knative-lambda"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"ca.crt":  s.Data[corev1.TLSCertKey],
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() //nolint:errcheck // Only its port is wanted.
	return l.Addr().String()
}

// registerFunction makes the running function known to Crossplane as a
// package would: an active FunctionRevision whose status carries the
// endpoint. No registry exists here, so the revision itself stays unhealthy;
// Crossplane calls the endpoint regardless.
func registerFunction(ctx context.Context, t *testing.T, kube client.Client, port string) {
	t.Helper()
	fr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
		"metadata": map[string]any{"name": "function-knative-lambda-e2e", "labels": map[string]any{"pkg.crossplane.io/package": "function-knative-lambda"}},
		"spec":     map[string]any{"desiredState": "Active", "image": "xpkg.crossplane.io/knative-lambda/function-knative-lambda:v0.1.0", "revision": int64(1)},
	}}
	if err := kube.Create(ctx, fr); err != nil {
		t.Fatal(err)
	}
	// A merge patch, as Crossplane's revision controller writes the same
	// object at once and an update would conflict with it.
	patch := []byte(`{"status":{"endpoint":"dns:///localhost:` + port + `","capabilities":["composition"]}}`)
	if err := kube.Status().Patch(ctx, fr, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
