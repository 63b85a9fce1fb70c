package node

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// An ending is what a test compares of how a build Job ended: its
// conditions, its pod's phase and its kaniko container's end, and what
// observe reads of it, without times and names.
type ending struct {
	Conditions []batchv1.JobCondition
	Phase      corev1.PodPhase
	Kaniko     corev1.ContainerStateTerminated
	Outcome    observe.BuildOutcome
}

// endingOf is the ending of a Job and its pods; of several pods (a Job
// retries a failed one) the last one's.
func endingOf(job *batchv1.Job, pods []corev1.Pod) ending {
	e := ending{Outcome: observe.OutcomeOf(job, pods)}
	for _, c := range job.Status.Conditions {
		e.Conditions = append(e.Conditions, batchv1.JobCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	var last *corev1.Pod
	for i := range pods {
		if last == nil || last.CreationTimestamp.Before(&pods[i].CreationTimestamp) {
			last = &pods[i]
		}
	}
	if last == nil {
		return e
	}
	e.Phase = last.Status.Phase
	for _, cs := range last.Status.ContainerStatuses {
		if t := cs.State.Terminated; cs.Name == render.ContainerKaniko && t != nil {
			e.Kaniko = corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message}
		}
	}
	return e
}

// TestPlayedBuildEndsAsReal holds playact to the real Job controller,
// kubelet and Kaniko: a build that succeeds and one whose base image does
// not exist end on the real node with Job conditions, a pod and a kaniko
// container's end that playact writes alike for the same exit code and
// message, and observe reads both alike. The tests that play builds on the
// API server alone stand on this.
func TestPlayedBuildEndsAsReal(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		base   func(ref string) string
	}{
		"Succeeds": {
			reason: "A build that pushes its image completes, and its digest is read from the termination message.",
			base:   func(ref string) string { return ref },
		},
		"BaseImageMissing": {
			reason: "A build whose base image is not in the registry fails after its retry, with Kaniko's own words at the end of its log.",
			base:   func(string) string { return unknownTag },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c, kube := sharedCluster(t), targetClient(t)
			rt := runtimes["Python3.11"]
			objs := renderInline(ctx, t, kube, rt, tc.base(publishBase(ctx, t, c, rt)), nil)
			job, pods := runBuild(ctx, t, kube, objs)
			real := endingOf(job, pods)
			t.Logf("the real build ended: %+v", real)

			now := metav1.Now()
			end := playact.KanikoExits(real.Kaniko.ExitCode, real.Kaniko.Message)
			pod := end.Pod(job, now)
			played := job.DeepCopy()
			played.Status.Conditions = end.JobConditions(pod.Status.Phase, now)
			if diff := cmp.Diff(real, endingOf(played, []corev1.Pod{*pod})); diff != "" {
				t.Errorf("%s\nplayact's ending: -real, +played:\n%s", tc.reason, diff)
			}
		})
	}
}
