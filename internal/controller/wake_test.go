package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestObjectsWakeTheirFunction checks that a function learns at once what
// the Job controller and Knative write of its objects, and that someone
// deleted one, with no poll to fall back on: the provider polls hourly.
func TestObjectsWakeTheirFunction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newUnpolledScene(ctx, t, "wake-", providerOptions{})
	fn, job := building(ctx, t, c, ns)
	mg := &v1alpha1.LambdaFunction{}
	phase := func(want v1alpha1.Phase) func() string {
		return func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
				return err.Error()
			}
			if mg.Status.AtProvider.Phase != want {
				return fmt.Sprintf("phase %s: %s", mg.Status.AtProvider.Phase, mg.GetCondition(xpv2.TypeReady).Message)
			}
			return ""
		}
	}
	// The Job controller takes the build up.
	playact.StartJob(ctx, t, c, job)
	wait.Until(ctx, t, "the function is building", phase(v1alpha1.PhaseBuilding))

	// The Job controller says the build ended: the Service follows.
	playact.FinishJob(ctx, t, c, job, 0, digestA)
	key := client.ObjectKey{Namespace: ns, Name: "hello"}
	svc := serviceWhen(ctx, t, c, key, "runs the built image", func(s *servingv1.Service) bool {
		return strings.HasSuffix(s.Spec.Template.Spec.Containers[0].Image, "@"+digestA)
	})

	// Knative says the Service is Ready: so is the function.
	playact.MarkServiceReady(ctx, t, c, svc)
	wait.Until(ctx, t, "the function is Ready", func() string {
		if msg := phase(v1alpha1.PhaseReady)(); msg != "" {
			return msg
		}
		if s := mg.GetCondition(xpv2.TypeReady).Status; s != corev1.ConditionTrue {
			return "Ready " + string(s)
		}
		return ""
	})

	// Someone deletes the Service: it is made again.
	if err := c.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	serviceWhen(ctx, t, c, key, "is made again", func(s *servingv1.Service) bool { return s.UID != svc.UID })
}

// TestBuiltWhenTheKubeletReports checks that a function deploys its build
// once the kubelet reports Kaniko's exit with the digest, woken by that
// report, without waiting for the Job controller, which says the same a
// second or two later; and that the build completed when Kaniko exited.
func TestBuiltWhenTheKubeletReports(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newUnpolledScene(ctx, t, "reported-", providerOptions{})
	fn, job := building(ctx, t, c, ns)
	playact.StartJob(ctx, t, c, job)
	exited := metav1.Unix(time.Now().Add(-time.Second).Unix(), 0)
	playact.ReportPod(ctx, t, c, job, playact.KanikoExits(0, digestA), exited)

	serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), "runs the built image", func(s *servingv1.Service) bool {
		return strings.HasSuffix(s.Spec.Template.Spec.Containers[0].Image, "@"+digestA)
	})
	mg := &v1alpha1.LambdaFunction{}
	wait.Until(ctx, t, "the status says when the build completed", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		if b := mg.Status.AtProvider.Build; b == nil || b.CompletedAt == nil || !b.CompletedAt.Equal(&exited) || b.Digest != digestA {
			return fmt.Sprintf("build %+v; want the digest, completed at %s", b, exited)
		}
		return ""
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	if len(job.Status.Conditions) != 0 {
		t.Errorf("the Job has conditions %v; the test plays no Job controller ending it", job.Status.Conditions)
	}
}

// building creates the inline function hello in ns, without eventing:
// Brokers are shared by name and wake no one. It returns the function
// and its build Job, once the provider has created it.
func building(ctx context.Context, t *testing.T, c client.Client, ns string) (*v1alpha1.LambdaFunction, *batchv1.Job) {
	t.Helper()
	fn := newFunction(ns, "hello", "def handler(event, context):\n    return {}\n")
	fn.Spec.ForProvider.Eventing = nil
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the build Job exists", func() string {
		if n := len(jobs(ctx, t, c, ns, "hello")); n != 1 {
			return fmt.Sprintf("%d Jobs", n)
		}
		return ""
	})
	return fn, &jobs(ctx, t, c, ns, "hello")[0]
}

// TestCreateWaitsForItsObjectsToReport checks that a new function is not
// reconciled again right after its create, as crossplane-runtime asks, but
// when Knative writes its Service's status: in a rush, that requeue spent a
// second token of the reconcile rate on every new function.
func TestCreateWaitsForItsObjectsToReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newUnpolledScene(ctx, t, "created-", providerOptions{})
	fn, svc := createImageFunction(ctx, t, c, ns, "hello")
	key := client.ObjectKeyFromObject(fn)
	mg := &v1alpha1.LambdaFunction{}
	reason := func() xpv2.ConditionReason {
		if err := c.Get(ctx, key, mg); err != nil {
			t.Fatal(err)
		}
		return mg.GetCondition(xpv2.TypeReady).Reason
	}
	wait.Until(ctx, t, "a reconcile reports", func() string {
		if reason() == "" {
			return "no Ready condition"
		}
		return ""
	})

	// The requeue came a second after the create; nothing else would look
	// at the function before Knative writes.
	time.Sleep(3 * time.Second)
	if r := reason(); r != xpv2.ReasonCreating {
		t.Fatalf("reconciled again before its Service reported: Ready reason %s, want %s", r, xpv2.ReasonCreating)
	}

	playact.MarkServiceReady(ctx, t, c, svc)
	wait.Until(ctx, t, "the function is Ready", func() string {
		if s := mg.GetCondition(xpv2.TypeReady); reason() != xpv2.ReasonAvailable {
			return fmt.Sprintf("Ready %s: %s %s", s.Status, s.Reason, s.Message)
		}
		return ""
	})
}
