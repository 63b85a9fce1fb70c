package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// TestBuildNotAdmitted checks that a build is not started in a namespace
// that enforces the restricted Pod Security level, whose admission would
// refuse Kaniko's pods without the Job ever saying so; that the resource
// says why; and that the build starts once the namespace admits it.
func TestBuildNotAdmitted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "restricted", keep)
	setEnforce(ctx, t, c, ns, "restricted")
	fn := newFunction(ns, "guarded", "def handler(event, context):\n    return 1\n")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "Ready=False, BuildNotAdmitted", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		if r.Status != corev1.ConditionFalse || r.Reason != v1alpha1.ReasonBuildNotAdmitted || !strings.Contains(r.Message, "namespace "+ns+" enforces the restricted Pod Security level") {
			return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
		}
		return ""
	})
	time.Sleep(3 * testPoll)
	if n := len(jobs(ctx, t, c, ns, "guarded")); n != 0 {
		t.Fatalf("%d build Jobs in a restricted namespace, want 0", n)
	}

	setEnforce(ctx, t, c, ns, "baseline")
	waitJobs(ctx, t, c, ns, "guarded", 1)
}

func setEnforce(ctx context.Context, t *testing.T, c client.Client, ns, level string) {
	t.Helper()
	n := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[observe.LabelEnforce] = level
	if err := c.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}
