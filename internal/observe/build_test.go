package observe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestBuild(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	job := func(c batchv1.JobConditionType, reason string) *batchv1.Job {
		j := &batchv1.Job{}
		if c != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: c, Status: corev1.ConditionTrue, Reason: reason}}
		}
		return j
	}
	pod := func(code int32, msg string) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}},
		}}}}
	}
	long := strings.Repeat("x", 2000) + "error: the end"

	cases := map[string]struct {
		reason string
		job    *batchv1.Job
		pods   []corev1.Pod
		want   BuildOutcome
	}{
		"Running": {
			reason: "A Job without a terminal condition is neither done nor failed.",
			job:    job("", ""),
			want:   BuildOutcome{},
		},
		"Succeeded": {
			reason: "A complete Job's digest comes from its pod's termination message.",
			job:    job(batchv1.JobComplete, ""),
			pods:   []corev1.Pod{pod(0, digest+"\n")},
			want:   BuildOutcome{Done: true, Digest: digest},
		},
		"SucceededWithoutDigest": {
			reason: "A complete Job that reported no digest has failed: nothing can be deployed.",
			job:    job(batchv1.JobComplete, ""),
			pods:   []corev1.Pod{pod(0, "not a digest")},
			want:   BuildOutcome{Failed: true, Message: MsgNoDigest},
		},
		"FailedWithLog": {
			reason: "A failed Job's message is the end of Kaniko's log, bounded.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods:   []corev1.Pod{pod(1, long)},
			want:   BuildOutcome{Failed: true, Message: "..." + long[len(long)-maxBuildMessage:]},
		},
		"FailedWithoutPods": {
			reason: "A failed Job whose pods are gone says what the Job controller said.",
			job:    job(batchv1.JobFailed, "DeadlineExceeded"),
			want:   BuildOutcome{Failed: true, Message: "DeadlineExceeded:"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Build(tc.job, tc.pods)); diff != "" {
				t.Errorf("%s\nBuild(...): -want, +got:\n%s", tc.reason, diff)
			}
			if got, want := Finished(tc.job), tc.job.Status.Conditions != nil; got != want {
				t.Errorf("%s\nFinished(...) = %t, want %t", tc.reason, got, want)
			}
		})
	}
}
