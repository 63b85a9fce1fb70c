package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"knative.dev/serving/pkg/apis/serving"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestTrafficSplit takes a function through a canary release against a real
// API server, with Knative Serving played: code changes while the Revision
// that served is pinned at 90 percent leave its image serving 90 percent,
// each new build taking the latest's 10 under its tag's URL; pinning it at
// 100 rolls back with no build and no new Revision; a pin Knative cannot
// resolve fails the function with Knative's words while the routes before
// still serve.
func TestTrafficSplit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "traffic", keep)
	fn := newFunction(ns, "canary", "def handler(event, context):\n    return 1\n")
	fn.Spec.ForProvider.Eventing = nil
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(fn)
	first := buildToReady(ctx, t, c, fn).Status.LatestReadyRevisionName
	digestB, digestC := "sha256:"+strings.Repeat("b", 64), "sha256:"+strings.Repeat("c", 64)
	const stableURL, canaryURL = "http://stable-canary.%s.example.com", "http://canary-canary.%s.example.com"
	split := func(latest string) []v1alpha1.TrafficObservation {
		return []v1alpha1.TrafficObservation{
			{RevisionName: first, Percent: 90, Tag: "stable", URL: fmt.Sprintf(stableURL, ns)},
			{RevisionName: latest, LatestRevision: true, Percent: 10, Tag: "canary", URL: fmt.Sprintf(canaryURL, ns)},
		}
	}

	// A code change that pins the Revision serving now at 90 percent.
	update(ctx, t, c, key, func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.Inline.Code = "def handler(event, context):\n    return 2\n"
		mg.Spec.ForProvider.Traffic = &v1alpha1.Traffic{Targets: []v1alpha1.TrafficTarget{
			{RevisionName: ptr(first), Percent: 90, Tag: ptr("stable")},
			{Percent: 10, Tag: ptr("canary")},
		}}
	})
	second := deployBuild(ctx, t, c, key, 2, digestB)
	waitTraffic(ctx, t, c, key, "the pinned Revision keeps 90 percent, the new build takes 10", split(second))
	for rev, digest := range map[string]string{first: digestA, second: digestB} {
		if img := revisionImage(ctx, t, c, ns, rev); !strings.HasSuffix(img, "@"+digest) {
			t.Errorf("Revision %s runs %s, want the image of digest %s", rev, img, digest)
		}
	}

	// Another code change: the pin holds, the newest build takes the 10.
	update(ctx, t, c, key, func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.Inline.Code = "def handler(event, context):\n    return 3\n"
	})
	third := deployBuild(ctx, t, c, key, 3, digestC)
	waitTraffic(ctx, t, c, key, "the pin holds through another build", split(third))

	// Rollback: the first Revision takes all of it, with no build and no
	// new Revision.
	update(ctx, t, c, key, func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Traffic.Targets = []v1alpha1.TrafficTarget{{RevisionName: ptr(first), Percent: 100}}
	})
	svc := serviceWhen(ctx, t, c, key, "the Service pins the first Revision alone", func(s *servingv1.Service) bool {
		return len(s.Spec.Traffic) == 1 && s.Spec.Traffic[0].RevisionName == first
	})
	playact.MarkServiceReady(ctx, t, c, svc)
	waitTraffic(ctx, t, c, key, "the rollback routes everything to the first Revision", []v1alpha1.TrafficObservation{{RevisionName: first, Percent: 100}})
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	if n := len(jobs(ctx, t, c, ns, fn.Name)); n != 3 {
		t.Errorf("the rollback built: %d build Jobs, want 3", n)
	}
	if n := len(revisions(ctx, t, c, ns, fn.Name)); n != 3 {
		t.Errorf("the rollback made a Revision: %d Revisions, want 3", n)
	}

	// A pin of a Revision that does not exist fails the Route; the
	// rollback's routes still serve.
	update(ctx, t, c, key, func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Traffic.Targets[0].RevisionName = ptr("canary-00042")
	})
	svc = serviceWhen(ctx, t, c, key, "the Service pins canary-00042", func(s *servingv1.Service) bool {
		return len(s.Spec.Traffic) == 1 && s.Spec.Traffic[0].RevisionName == "canary-00042"
	})
	playact.MarkServiceReady(ctx, t, c, svc)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonRouteFailed, `RevisionMissing: Revision "canary-00042" referenced in traffic not found.`)
	waitTraffic(ctx, t, c, key, "the routes before still serve", []v1alpha1.TrafficObservation{{RevisionName: first, Percent: 100}})
}

// deployBuild waits for the function's nth build, finishes it with the
// digest, waits until the Service runs it, plays its rollout and returns
// the Revision it made.
func deployBuild(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, n int, digest string) string {
	t.Helper()
	job := unfinished(t, waitJobs(ctx, t, c, key.Namespace, key.Name, n))
	playact.FinishJob(ctx, t, c, &job, 0, digest)
	svc := serviceWhen(ctx, t, c, key, fmt.Sprintf("build %d is deployed", n), func(s *servingv1.Service) bool {
		return strings.HasSuffix(s.Spec.Template.Spec.Containers[0].Image, "@"+digest)
	})
	playact.MarkServiceReady(ctx, t, c, svc)
	return svc.Status.LatestReadyRevisionName
}

// waitTraffic waits until the function's status reports the traffic.
func waitTraffic(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, what string, want []v1alpha1.TrafficObservation) {
	t.Helper()
	wait.Until(ctx, t, what, func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, key, mg); err != nil {
			return err.Error()
		}
		return cmp.Diff(want, mg.Status.AtProvider.Traffic)
	})
}

// revisions lists the Revisions of a function's Service.
func revisions(ctx context.Context, t *testing.T, c client.Client, ns, name string) []servingv1.Revision {
	t.Helper()
	l := &servingv1.RevisionList{}
	if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{serving.ServiceLabelKey: name}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// revisionImage is the image a Revision runs.
func revisionImage(ctx context.Context, t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	rev := &servingv1.Revision{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rev); err != nil {
		t.Fatal(err)
	}
	return rev.Spec.Containers[0].Image
}

// TestPlayedRolloutResumes checks the played Knative itself: a rollout that
// stopped after creating its Revision, before writing the Revision's status
// (as when chaos kills the API server), is finished by the next play, as
// Knative's revision reconciler would, instead of reading as a failure.
func TestPlayedRolloutResumes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "resume", keep)
	fn := newImageFunction(ns, "resumed")
	fn.Spec.ForProvider.Eventing = nil
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	svc := serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), "the Service exists", anyService)
	half := playact.Roll(svc.DeepCopy(), nil)
	half.Status = servingv1.RevisionStatus{}
	if err := c.Create(ctx, half); err != nil {
		t.Fatal(err)
	}
	playact.MarkServiceReady(ctx, t, c, svc)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
}
