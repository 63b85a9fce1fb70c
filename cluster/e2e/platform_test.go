//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// A platform is a local control plane with what a platform team installs
// on it, the way it installs it:
//   - the three packages are pushed with the Crossplane CLI to an OCI
//     registry on loopback (TLS from a test CA), and an ImageConfig points
//     their published path at it;
//   - Crossplane core (External package runtime) installs only the
//     Configuration; its package manager resolves and installs the Provider
//     and the Function from their dependencies and unpacks their CRDs, and
//     the test, as the External runtime, runs the provider and the function
//     as processes with Crossplane's certificates.
type platform struct {
	cp *local.ControlPlane
	// kube knows the platform API's kinds.
	kube       client.Client
	kubeconfig string
	dir        string
}

// startPlatform starts a platform whose control plane also has the CRDs of
// more, and returns once the packages are healthy and the platform API is
// offered.
func startPlatform(ctx context.Context, t *testing.T, more ...local.CRDSource) *platform {
	t.Helper()
	dir := t.TempDir()
	host, caFile := startRegistry(t, dir)
	pushPackages(ctx, t, host, caFile)

	// The packages bring this project's CRDs; the control plane has only
	// Knative's and Crossplane's.
	crds, err := local.CRDsWhere(ctx, repo, func(crd *extv1.CustomResourceDefinition) bool { return crd.Spec.Group != "lambda.m.crossplane.io" })
	if err != nil {
		t.Fatal(err)
	}
	extra, err := local.SourceCRDs(ctx, repo, more...)
	if err != nil {
		t.Fatal(err)
	}
	crds = append(crds, extra...)
	// envtest and the test's client (Pod Security's warnings about the
	// played build pods) log through controller-runtime.
	ctrllog.SetLogger(logr.Discard())
	cp, err := local.Start(ctx, local.Options{CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := cp.ForTest(t, dir)
	kube := testkit.Client(t, cp.Config)
	// Its garbage collector finishes the (foreground) deletions Crossplane
	// starts; the test plays every other controller.
	gcLogs := &bytes.Buffer{}
	gc, err := local.StartGarbageCollector(filepath.Join(repo, ".cache", "bin"), kubeconfig, gcLogs)
	stopAtEnd(t, gc, err, gcLogs)

	create(ctx, t, kube, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: xpNamespace}})
	core := bin(t, "crossplane-core")
	initCrossplane(ctx, t, core, kubeconfig, dir)
	clientCerts := filepath.Join(dir, "client-certs")
	writeSecret(ctx, t, kube, secretClient, clientCerts, "tls.crt", "tls.key", "ca.crt")
	// Crossplane caches what it unpacks there, and cannot create them.
	for _, d := range []string{"xpkg", "xfn"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	_, metricsPort, _ := net.SplitHostPort(loopback.Address(t))
	_, healthPort, _ := net.SplitHostPort(loopback.Address(t))
	// With the default burst of 100, Crossplane's circuit breaker opens
	// during a composite's first rollout and drops its events, spec changes
	// included, for 30 s at a time: on the real node too (see the README's
	// What runs for real), where the change waits for the function's TTL.
	// The tests play builds and rollouts in milliseconds and change specs
	// right after, so here it is raised.
	start(t, "crossplane", kubeconfig, core, "core", "start", "--enable-webhooks=false", "--package-runtime=External",
		"--ca-bundle-path="+caFile, "--namespace="+xpNamespace,
		"--metrics-port="+metricsPort, "--health-probe-port="+healthPort, "--tls-client-certs-dir="+clientCerts,
		"--xpkg-cache-dir="+filepath.Join(dir, "xpkg"), "--xfn-cache-dir="+filepath.Join(dir, "xfn"), "--poll-interval=5s",
		"--circuit-breaker-burst=1000")

	// What a platform applies: the ImageConfig for its mirror, then the
	// Configuration alone.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, list := range []string{"pkg.crossplane.io/v1/ConfigurationList", "pkg.crossplane.io/v1/ConfigurationRevisionList", "pkg.crossplane.io/v1/ProviderList", "pkg.crossplane.io/v1/FunctionList", "pkg.crossplane.io/v1beta1/LockList", "LambdaList", "LambdaClaimList", "pkg.crossplane.io/v1/FunctionRevisionList"} {
			for _, o := range listOf(context.Background(), t, kube, list) {
				t.Logf("%s %s: %v", o.GetKind(), o.GetName(), o.Object["status"])
			}
		}
	})
	create(ctx, t, kube, node.Mirror(host+"/knative-lambda"))
	// The provider declares safe-start, so its managed resources' CRDs come
	// only once a policy activates them (Crossplane's Helm chart activates
	// every one by default).
	create(ctx, t, kube, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceActivationPolicy",
		"metadata": map[string]any{"name": "knative-lambda"},
		"spec":     map[string]any{"activate": []any{"*.lambda.m.crossplane.io"}},
	}})
	create(ctx, t, kube, node.Configuration())

	fnCerts := filepath.Join(dir, "function-certs")
	functionCerts(ctx, t, kube, fnCerts)
	_, fnPort, _ := net.SplitHostPort(loopback.Address(t))
	start(t, "function", kubeconfig, build(ctx, t, "function-knative-lambda", "./fn"),
		"--tls-certs-dir="+fnCerts, "--address=localhost:"+fnPort, "--metrics-address=")
	installed := playRuntime(ctx, t, kube, fnPort)
	t.Logf("the package manager installed %v", installed)
	start(t, "provider", kubeconfig, build(ctx, t, "provider", "./cmd/provider"),
		"--poll=5s", "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0")

	apply(ctx, t, kube, filepath.Join(repo, "examples", "clusterproviderconfig.yaml"))
	wait.Until(ctx, t, "the packages are healthy and the XRDs established and offered", func() string {
		for _, list := range []string{"pkg.crossplane.io/v1/ConfigurationList", "pkg.crossplane.io/v1/ProviderList", "pkg.crossplane.io/v1/FunctionList", "apiextensions.crossplane.io/v2/CompositeResourceDefinitionList"} {
			l := listOf(ctx, t, kube, list)
			if len(l) == 0 {
				return "no " + list
			}
			for _, x := range l {
				for _, c := range []string{"Healthy", "Established", "Offered"} {
					if _, has := manifest.Condition(x, c); has && !conditionTrue(x, c) {
						st, _ := manifest.Condition(x, c)
						return fmt.Sprintf("%s %s: %s %v", x.GetKind(), x.GetName(), c, st)
					}
				}
			}
		}
		return ""
	})
	return &platform{cp: cp, kube: testkit.Client(t, cp.Config), kubeconfig: kubeconfig, dir: dir}
}
