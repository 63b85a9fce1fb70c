//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// An xrLifecycle is make run's first function as an application team
// writes it on a platform: a Lambda, the v2 XR of the platform API, in the
// platform examples' namespace, which Crossplane, running on the node,
// composes through the function's pod (Direct mode).
type xrLifecycle struct {
	kube client.Client
	key  client.ObjectKey
}

// newXRLifecycle reads the local cluster's kubeconfig that make run
// printed.
func newXRLifecycle(t *testing.T, kubeconfig string) xrLifecycle {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return xrLifecycle{kube: testkit.Client(t, cfg), key: client.ObjectKey{Namespace: "apps", Name: "hello"}}
}

// run takes the Lambda through what lifecycle.run takes the provider's
// function through, on the real cluster: it is built and serves, and on its
// way there is never said to have failed; a code change builds once and its
// Revision serves; a scale change builds nothing; a rollback behind a tag with the latest at its own tag's
// URL builds nothing; a crashing version and a failed build stall it in the
// kubelet's and Kaniko's words while the Revision before serves; deleting it
// leaves none of its objects.
func (l xrLifecycle) run(ctx context.Context, t *testing.T) {
	ns, err := manifest.Read(filepath.Join(repo, "examples", "platform", "xrs", "namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(ns, l.firstFunction(t)) {
		if err := l.kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var phases []string
	fnURL := ""
	wait.Until(ctx, t, "the Lambda is Ready with a URL", func() string {
		xr := l.get(ctx, t)
		phase, _, _ := unstructured.NestedString(xr.Object, "status", "phase")
		if len(phases) == 0 || phases[len(phases)-1] != phase {
			phases = append(phases, phase)
		}
		fnURL, _, _ = unstructured.NestedString(xr.Object, "status", "url")
		if phase != string(v1alpha1.PhaseReady) || fnURL == "" {
			return fmt.Sprintf("phases %v", phases)
		}
		return ""
	})
	t.Logf("the Lambda was Ready %s after it was applied, through phases %v", time.Since(start).Round(time.Second), phases)
	if slices.Contains(phases, string(v1alpha1.PhaseFailed)) {
		t.Errorf("on its way to Ready the Lambda went through phases %v: a rollout that succeeds never fails", phases)
	}
	replies(ctx, t, fnURL, "the Lambda answers", `{"accepted":42}`)
	t.Logf("the Lambda's first reply came %s after it was applied", time.Since(start).Round(time.Second))
	first, _, _ := unstructured.NestedString(l.get(ctx, t).Object, "status", "latestReadyRevision")

	changed := time.Now()
	n := buildsDuring(ctx, t, l.kube, l.key, func() {
		l.update(ctx, t, func(spec map[string]any) {
			_ = unstructured.SetNestedField(spec, handlerV2, "source", "inline", "code")
		})
		replies(ctx, t, fnURL, "the new code's Revision serves", `{"accepted":42,"version":2}`)
	})
	t.Logf("the Lambda's new code served %s after the change", time.Since(changed).Round(time.Second))
	if n != 1 {
		t.Errorf("a code change made %d builds; want 1", n)
	}
	served, _, _ := unstructured.NestedString(l.get(ctx, t).Object, "status", "latestReadyRevision")
	n = buildsDuring(ctx, t, l.kube, l.key, func() {
		l.update(ctx, t, func(spec map[string]any) { _ = unstructured.SetNestedField(spec, int64(3), "scaling", "maxReplicas") })
		wait.Until(ctx, t, "a Revision of the new scale serves", func() string {
			xr := l.get(ctx, t)
			r, _, _ := unstructured.NestedString(xr.Object, "status", "latestReadyRevision")
			phase, _, _ := unstructured.NestedString(xr.Object, "status", "phase")
			if r == served || phase != string(v1alpha1.PhaseReady) {
				return fmt.Sprintf("Revision %s, phase %s", r, phase)
			}
			return ""
		})
	})
	if n != 0 {
		t.Errorf("a scale change made %d builds; want none", n)
	}
	n = buildsDuring(ctx, t, l.kube, l.key, func() {
		split, err := kruntime.DefaultUnstructuredConverter.ToUnstructured(canaryTraffic(first))
		if err != nil {
			t.Fatal(err)
		}
		l.update(ctx, t, func(spec map[string]any) { spec["traffic"] = split })
		canary(ctx, t, fnURL, func() []v1alpha1.TrafficObservation {
			st := &v1alpha1.LambdaFunctionObservation{}
			status, _, _ := unstructured.NestedMap(l.get(ctx, t).Object, "status")
			if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(status, st); err != nil {
				t.Fatal(err)
			}
			return st.Traffic
		})
		l.update(ctx, t, func(spec map[string]any) { delete(spec, "traffic") })
		replies(ctx, t, fnURL, "the latest Revision takes every request again", `{"accepted":42,"version":2}`)
	})
	if n != 0 {
		t.Errorf("a traffic split made %d builds; want none", n)
	}

	l.update(ctx, t, func(spec map[string]any) { _ = unstructured.SetNestedField(spec, crashing, "source", "inline", "code") })
	l.stalls(ctx, t, fnURL, "the crashing version", v1alpha1.ReasonRevisionFailed, "refusing to start: version 3")
	l.update(ctx, t, func(spec map[string]any) {
		_ = unstructured.SetNestedField(spec, handlerV2, "source", "inline", "code")
		_ = unstructured.SetNestedField(spec, "no-such-package==1.0\n", "source", "inline", "dependencies")
	})
	l.stalls(ctx, t, fnURL, "the failed build", v1alpha1.ReasonBuildFailed, "error building image")

	deleted(ctx, t, l.kube, v1alpha1.LambdaFunctionKind, l.get(ctx, t), render.DefaultBroker)
}

// buildsDuring counts the build Jobs of the function key names that appear
// while during runs: a composite's build Job goes once the build has
// pushed, so the Jobs left after it say nothing.
func buildsDuring(ctx context.Context, t *testing.T, kube client.Client, key client.ObjectKey, during func()) int {
	t.Helper()
	seen := map[string]bool{}
	look := func() error {
		jobs := &batchv1.JobList{}
		if err := kube.List(ctx, jobs, client.InNamespace(key.Namespace), ownLabels(v1alpha1.LambdaFunctionKind, key)); err != nil {
			return err
		}
		for _, j := range jobs.Items {
			seen[j.Name] = true
		}
		return nil
	}
	if err := look(); err != nil {
		t.Fatal(err)
	}
	before := len(seen)
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		// A build takes seconds, and its Job stays until the Service
		// serves its image: a look every 200 ms sees each.
		for {
			if err := look(); err != nil {
				done <- err
				return
			}
			select {
			case <-stop:
				done <- look()
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	during()
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return len(seen) - before
}

// firstFunction is make run's first function as a Lambda: its spec is the
// LambdaFunction's forProvider.
func (l xrLifecycle) firstFunction(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Read(filepath.Join(repo, "cluster", "local", "cmd", "run", "first-function.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("the first function: %v (%d objects)", err, len(objs))
	}
	spec, _, _ := unstructured.NestedMap(objs[0].Object, "spec", "forProvider")
	xr := lambda()
	xr.SetNamespace(l.key.Namespace)
	xr.SetName(l.key.Name)
	xr.Object["spec"] = spec
	return xr
}

// stalls waits until the Lambda is Stalled with reason and a message that
// says want, as the real component wrote it, and checks that the Revision
// before still answers.
func (l xrLifecycle) stalls(ctx context.Context, t *testing.T, fnURL, what string, reason xpv2.ConditionReason, want string) {
	t.Helper()
	start := time.Now()
	wait.Until(ctx, t, what+" is reported", func() string {
		c, _ := manifest.Condition(l.get(ctx, t), "Stalled")
		if msg, _ := c["message"].(string); c["status"] != "True" || c["reason"] != string(reason) || !strings.Contains(msg, want) {
			return fmt.Sprintf("Stalled %v %v: %q", c["status"], c["reason"], msg)
		}
		return ""
	})
	c, _ := manifest.Condition(l.get(ctx, t), "Stalled")
	t.Logf("%s of the Lambda was reported %s after the change: %v", what, time.Since(start).Round(time.Second), c["message"])
	replies(ctx, t, fnURL, "the Revision before still serves", `{"accepted":42,"version":2}`)
}

// get reads the Lambda.
func (l xrLifecycle) get(ctx context.Context, t *testing.T) *unstructured.Unstructured {
	t.Helper()
	xr := lambda()
	if err := l.kube.Get(ctx, l.key, xr); err != nil {
		t.Fatal(err)
	}
	return xr
}

// update changes the Lambda's spec, as kubectl edit does.
func (l xrLifecycle) update(ctx context.Context, t *testing.T, change func(spec map[string]any)) {
	t.Helper()
	xr := lambda()
	xr.SetNamespace(l.key.Namespace)
	xr.SetName(l.key.Name)
	updateSpec(ctx, t, l.kube, xr, change)
}

// lambda is an empty Lambda of the platform API.
func lambda() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("platform.lambda.crossplane.io/v1alpha1")
	u.SetKind("Lambda")
	return u
}
