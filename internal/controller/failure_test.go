package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestBuildFailure checks that a failed build says why, changes nothing that
// is deployed, and that fixing the code recovers.
func TestBuildFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "failure", keep)
	fn := newFunction(ns, "flaky", "def handler(event, context):\n    return 1\n")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}

	// A first build succeeds, so there is a Service to keep.
	job := waitJobs(ctx, t, c, ns, "flaky", 1)[0]
	playact.FinishJob(ctx, t, c, &job, 0, digestA)
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the Service exists", func() string {
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "flaky"}, svc))
	})
	playact.MarkServiceReady(ctx, t, c, svc)

	// The next build fails with Kaniko's error.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.Inline.Dependencies = "no-such-package==0.0.0\n"
	})
	mg := &v1alpha1.LambdaFunction{}
	js := waitJobs(ctx, t, c, ns, "flaky", 2)
	failed := unfinished(t, js)
	kanikoLog := "INFO Running pip install\nERROR: No matching distribution found for no-such-package==0.0.0\nerror building image: exit status 1"
	playact.FinishJob(ctx, t, c, &failed, 1, kanikoLog)
	wait.Until(ctx, t, "Ready=False with the build's error", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		if r.Status != corev1.ConditionFalse || r.Reason != "BuildFailed" || !strings.Contains(r.Message, "No matching distribution found") || mg.Status.AtProvider.Phase != v1alpha1.PhaseFailed {
			return fmt.Sprintf("Ready %s %s %q, phase %s", r.Status, r.Reason, r.Message, mg.Status.AtProvider.Phase)
		}
		return ""
	})
	mg.SetGroupVersionKind(v1alpha1.LambdaFunctionGroupVersionKind)
	wait.Until(ctx, t, "a BuildFailed event", func() string {
		if !eventReasons(ctx, t, c, mg)["BuildFailed"] {
			return "none yet"
		}
		return ""
	})
	if metricValue(t, "lambda_builds_total", map[string]string{"outcome": "failed", "runtime": "python", "cause": "build"}) < 1 {
		t.Error("the failed build was not counted in lambda_builds_total")
	}
	time.Sleep(3 * testPoll)
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	if img := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digestA) {
		t.Errorf("a failed build changed the Service's image to %s", img)
	}
	if n := len(jobs(ctx, t, c, ns, "flaky")); n != 2 {
		t.Errorf("a failed build was retried: %d Jobs, want 2", n)
	}

	// Asking for a rebuild builds the same code once more.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.SetAnnotations(map[string]string{v1alpha1.AnnotationRebuild: "after-registry-outage"})
	})
	rebuild := unfinished(t, waitJobs(ctx, t, c, ns, "flaky", 3))
	playact.FinishJob(ctx, t, c, &rebuild, 1, kanikoLog)

	// Fixing the code builds once more, and that build deploys.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.Inline.Dependencies = ""
		mg.Spec.ForProvider.Source.Inline.Code = "def handler(event, context):\n    return 2\n"
	})
	fixed := unfinished(t, waitJobs(ctx, t, c, ns, "flaky", 4))
	digestB := "sha256:" + strings.Repeat("2", 64)
	playact.FinishJob(ctx, t, c, &fixed, 0, digestB)
	wait.Until(ctx, t, "the fixed build is deployed", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return err.Error()
		}
		if img := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digestB) {
			return "image " + img
		}
		return ""
	})
}

// TestObserveOnly checks that a resource the provider may only observe gets
// nothing written to its target cluster.
func TestObserveOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "observe", keep)
	fn := newFunction(ns, "watched", "def handler(e, c):\n    return 0\n")
	fn.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the provider has observed the resource", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		if mg.GetCondition(xpv2.TypeSynced).Status == "" {
			return "not reconciled yet"
		}
		return ""
	})
	time.Sleep(3 * testPoll)
	for _, l := range []client.ObjectList{&batchv1.JobList{}, &corev1.ConfigMapList{}, &servingv1.ServiceList{}} {
		if err := c.List(ctx, l, ours(ns, "watched")...); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(l); n != 0 {
			t.Errorf("an Observe-only resource got %d objects written as %T", n, l)
		}
	}
}

// waitJobs waits until the function has n build Jobs.
func waitJobs(ctx context.Context, t *testing.T, c client.Client, ns, name string, n int) []batchv1.Job {
	t.Helper()
	var js []batchv1.Job
	wait.Until(ctx, t, fmt.Sprintf("%d build Jobs", n), func() string {
		if js = jobs(ctx, t, c, ns, name); len(js) != n {
			return fmt.Sprintf("%d Jobs", len(js))
		}
		return ""
	})
	return js
}

// unfinished is the one build Job no one has finished yet.
func unfinished(t *testing.T, js []batchv1.Job) batchv1.Job {
	t.Helper()
	var open []batchv1.Job
	for _, j := range js {
		if len(j.Status.Conditions) == 0 {
			open = append(open, j)
		}
	}
	if len(open) != 1 {
		t.Fatalf("%d unfinished build Jobs; the test expects exactly one", len(open))
	}
	return open[0]
}
