//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
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
	crds, err := local.CrossplaneCRDs.Path(ctx, repo)
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
// writes it where function.MTLSCertificates reads it: what the package
// runtime does for a function's pod.
func functionCerts(ctx context.Context, t *testing.T, kube client.Client, dir string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: xpNamespace, Name: secretCA}, s); err != nil {
		t.Fatal(err)
	}
	ca, err := testca.Parse(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue("function-knative-lambda")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": s.Data[corev1.TLSCertKey]} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// playRuntime plays the External package runtime for the package manager's
// revisions of the provider and the function: with it, Crossplane runs no
// pods and waits for whoever runs the packages to say where they serve and
// that they are healthy. The provider and the function run as processes of
// the test, so every active revision is marked healthy with the TLS Secret
// init made, and the function's with the address it listens on. It returns
// the name the package manager gave each package, by kind.
func playRuntime(ctx context.Context, t *testing.T, kube client.Client, fnPort string) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, kind := range []string{"ProviderRevision", "FunctionRevision"} {
		wait.Until(ctx, t, "an active "+kind+" runs, played", func() string {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("pkg.crossplane.io/v1")
			l.SetKind(kind + "List")
			if err := kube.List(ctx, l); err != nil {
				return err.Error()
			}
			for i := range l.Items {
				rev := &l.Items[i]
				if desired, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); desired != "Active" {
					continue
				}
				names[strings.TrimSuffix(kind, "Revision")] = rev.GetLabels()["pkg.crossplane.io/package"]
				_ = unstructured.SetNestedField(rev.Object, secretServer, "status", "tlsServerSecretName")
				if kind == "FunctionRevision" {
					_ = unstructured.SetNestedField(rev.Object, "dns:///localhost:"+fnPort, "status", "endpoint")
				}
				conds, _, _ := unstructured.NestedSlice(rev.Object, "status", "conditions")
				conds = slices.DeleteFunc(conds, func(c any) bool { m, _ := c.(map[string]any); return m["type"] == "RuntimeHealthy" })
				conds = append(conds, map[string]any{
					"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision",
					"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
				})
				_ = unstructured.SetNestedSlice(rev.Object, conds, "status", "conditions")
				// Crossplane's revision controller writes the same status;
				// a conflict is tried again.
				if err := kube.Status().Update(ctx, rev); err != nil {
					return err.Error()
				}
				return ""
			}
			return "none yet"
		})
	}
	return names
}
