//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/gitserver"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// Flux's namespace and the objects of examples/flux.
const (
	fluxNamespace = "flux-system"
	gitRepository = "knative-lambda"
	appsKS        = "lambda-apps"
	claimsNS      = "legacy-apps"
)

// The files of this repository the test's git repository holds: the
// platform Kustomization's RBAC and the apps Kustomization's claims. The
// git and S3 examples are left out: their sources are on the internet, and
// the provider and the function refuse loopback, where a test's servers are.
var repoFiles = []string{
	"package/configuration/rbac/clusterrole.yaml",
	"examples/platform/claims/namespace.yaml",
	"examples/platform/claims/python-inline.yaml",
	"examples/platform/claims/agent.yaml",
	"examples/platform/claims/supervisor.yaml",
}

// TestFlux reconciles claims from git with Flux's own source-controller and
// kustomize-controller, as an application team does, on a platform installed
// as users install it (see platform):
//   - the repository is served over HTTPS by git's http-backend with a test
//     CA, and Flux is given examples/flux as shipped, but for the URL, which
//     points at the test's server, and a Secret with its CA;
//   - the apps Kustomization goes Ready once the claims are Ready, through the
//     health expressions examples/flux ships;
//   - a commit that breaks a build fails it through the claim's Stalled
//     condition, not its timeout; the seconds it takes are printed;
//   - a commit that fixes the build makes it Ready again;
//   - a commit that deletes a claim prunes the claim and all it composed.
func TestFlux(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	p := startPlatform(ctx, t, local.FluxCRDs...)
	kube := p.kube

	g := gitserver.Start(t, "knative-lambda")
	files := map[string][]byte{}
	for _, f := range repoFiles {
		b, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	g.Commit(t, "platform and claims", files)

	startFlux(ctx, t, p)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, list := range []string{"kustomize.toolkit.fluxcd.io/v1/KustomizationList", "source.toolkit.fluxcd.io/v1/GitRepositoryList", "LambdaClaimList", "AgentClaimList", "XLambdaList", "XAgentList"} {
			for _, o := range listOf(context.Background(), t, kube, list) {
				t.Logf("%s %s: generation %d, status %v", o.GetKind(), o.GetName(), o.GetGeneration(), o.Object["status"])
			}
		}
	})
	create(ctx, t, kube, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: fluxNamespace, Name: "knative-lambda-ca"},
		Data:       map[string][]byte{"ca.crt": g.CA()},
	})
	for _, f := range []string{"platform.yaml", "apps.yaml"} {
		objs, err := manifest.Read(filepath.Join(repo, "examples", "flux", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "GitRepository" {
				_ = unstructured.SetNestedField(o.Object, g.URL(), "spec", "url")
				_ = unstructured.SetNestedMap(o.Object, map[string]any{"name": "knative-lambda-ca"}, "spec", "secretRef")
			}
			create(ctx, t, kube, o)
		}
	}

	// The claims come from git; the test plays the build and Knative.
	appSecret(ctx, t, kube, claimsNS)
	buildAndServe(ctx, t, kube, claimsNS, "hello-python")
	for _, name := range []string{"support", "supervisor"} {
		agent := &servingv1.Service{}
		wait.Until(ctx, t, "the Service of agent "+name, func() string {
			return wait.ErrString(kube.Get(ctx, client.ObjectKey{Namespace: claimsNS, Name: name}, agent))
		})
		serve(ctx, t, kube, agent)
	}
	// The support agent forwards to the supervisor through its relay,
	// composed once the supervisor's Broker has an address; serving it
	// marks the forward's Trigger too.
	relay := &servingv1.Service{}
	wait.Until(ctx, t, "the relay of agent support", func() string {
		return wait.ErrString(kube.Get(ctx, client.ObjectKey{Namespace: claimsNS, Name: render.RelayName("support")}, relay))
	})
	serve(ctx, t, kube, relay)
	waitKustomization(ctx, t, kube, g.Head(t), "True", "")
	waitReady(ctx, t, kube, object("LambdaClaim", claimsNS, "hello-python"))
	waitReady(ctx, t, kube, object("AgentClaim", claimsNS, "support"))

	// A dependency that does not exist fails pip in the build.
	python := "examples/platform/claims/python-inline.yaml"
	pushed := time.Now()
	broken := g.Commit(t, "depend on a package that does not exist", map[string][]byte{
		python: edit(t, files[python], "requests==2.32.3", "requests==2.32.3\n        no-such-package==0.0.1"),
	})
	reconcileSource(ctx, t, kube)
	job := runningBuild(ctx, t, kube, claimsNS, "hello-python")
	failed := time.Now()
	playact.FinishJob(ctx, t, kube, job, 1, "error building image: error building stage: failed to execute command: waiting for process to exit: exit status 1")
	msg := waitKustomization(ctx, t, kube, broken, "False", "HealthCheckFailed")
	if !strings.Contains(msg, "LambdaClaim/"+claimsNS+"/hello-python status: 'Failed'") {
		t.Errorf("the Kustomization fails with %q; want it to name the failed claim", msg)
	}
	t.Logf("the broken commit failed the Kustomization %.1f s after the build failed (%.1f s after the push; its timeout is 15 min): %s",
		time.Since(failed).Seconds(), time.Since(pushed).Seconds(), msg)

	// Flux may first see the claim still Stalled from the broken commit; it
	// tries again after the retryInterval examples/flux sets.
	pushed = time.Now()
	fixed := g.Commit(t, "fix the dependencies", map[string][]byte{python: edit(t, files[python], "return {", "return {\"fixed\": True, ")})
	reconcileSource(ctx, t, kube)
	buildAndServe(ctx, t, kube, claimsNS, "hello-python")
	waitKustomization(ctx, t, kube, fixed, "True", "")
	t.Logf("the fixing commit made the Kustomization Ready %.1f s after the push", time.Since(pushed).Seconds())

	// Pruning deletes the claim; Crossplane deletes its composite and
	// Kubernetes' garbage collector what that owns.
	composed := claimObjects(ctx, t, kube, "support")
	pruned := g.Commit(t, "retire the support agent", nil, "examples/platform/claims/agent.yaml")
	reconcileSource(ctx, t, kube)
	waitKustomization(ctx, t, kube, pruned, "True", "")
	gone := append(composed, object("AgentClaim", claimsNS, "support"))
	waitGone(ctx, t, kube, gone)
	waitReady(ctx, t, kube, object("LambdaClaim", claimsNS, "hello-python"))
}

// startFlux runs source-controller, serving artifacts on loopback, and
// kustomize-controller, in all namespaces, without leader election (which
// needs a pod's namespace), and with dependencies looked at again after 5 s
// instead of 30 s.
func startFlux(ctx context.Context, t *testing.T, p *platform) {
	t.Helper()
	create(ctx, t, p.kube, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxNamespace}})
	storage := filepath.Join(p.dir, "flux-artifacts")
	if err := os.MkdirAll(storage, 0o700); err != nil {
		t.Fatal(err)
	}
	artifacts := loopback.Address(t)
	start(t, "source-controller", p.kubeconfig, bin(t, "source-controller"), "--storage-path="+storage,
		"--storage-addr="+artifacts, "--storage-adv-addr="+artifacts, "--metrics-addr=0", "--health-addr="+loopback.Address(t),
		"--requeue-dependency=5s", "--log-level=debug")
	start(t, "kustomize-controller", p.kubeconfig, bin(t, "kustomize-controller"),
		"--metrics-addr=0", "--health-addr="+loopback.Address(t), "--requeue-dependency=5s", "--log-level=debug")
}

// reconcileSource asks source-controller to fetch the repository now, as
// flux reconcile source git does, instead of at its interval.
func reconcileSource(ctx context.Context, t *testing.T, kube client.Client) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"reconcile.fluxcd.io/requestedAt": time.Now().Format(time.RFC3339Nano),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	repo := &unstructured.Unstructured{}
	repo.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	repo.SetKind("GitRepository")
	repo.SetNamespace(fluxNamespace)
	repo.SetName(gitRepository)
	if err := kube.Patch(ctx, repo, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// waitKustomization waits for the apps Kustomization to have attempted the
// commit and to be Ready with the status (and, when not empty, the reason)
// given, and returns the Ready condition's message.
func waitKustomization(ctx context.Context, t *testing.T, kube client.Client, commit, status, reason string) string {
	t.Helper()
	var msg string
	wait.Until(ctx, t, fmt.Sprintf("Kustomization %s Ready %s %s at %.7s", appsKS, status, reason, commit), func() string {
		ks := &unstructured.Unstructured{}
		ks.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		ks.SetKind("Kustomization")
		if err := kube.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: appsKS}, ks); err != nil {
			return err.Error()
		}
		attempted, _, _ := unstructured.NestedString(ks.Object, "status", "lastAttemptedRevision")
		c, _ := manifest.Condition(ks, "Ready")
		msg, _ = c["message"].(string)
		if attempted != gitserver.Branch+"@sha1:"+commit || c["status"] != status || (reason != "" && c["reason"] != reason) {
			return fmt.Sprintf("revision %s, Ready %v %v: %s", attempted, c["status"], c["reason"], msg)
		}
		return ""
	})
	return msg
}

// claimObjects are a claim's composite resource and the Knative objects it
// composed.
func claimObjects(ctx context.Context, t *testing.T, kube client.Client, claim string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, list := range []string{"XAgentList", "serving.knative.dev/v1/ServiceList", "eventing.knative.dev/v1/BrokerList", "eventing.knative.dev/v1/TriggerList"} {
		for _, o := range listOf(ctx, t, kube, list) {
			if o.GetLabels()["crossplane.io/claim-name"] == claim {
				out = append(out, o)
			}
		}
	}
	if len(out) < 3 {
		t.Fatalf("claim %s has %d objects; want its composite, a Service and a Trigger at least", claim, len(out))
	}
	return out
}

// edit replaces the one occurrence of old in a file's content.
func edit(t *testing.T, content []byte, old, replacement string) []byte {
	t.Helper()
	if strings.Count(string(content), old) != 1 {
		t.Fatalf("%q is not in the file exactly once", old)
	}
	return []byte(strings.Replace(string(content), old, replacement, 1))
}
