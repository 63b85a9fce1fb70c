package observe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
)

func TestOutcomeOf(t *testing.T) {
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
	exited := func(code int32, msg string, at int64) corev1.Pod {
		p := pod(code, msg)
		p.Status.ContainerStatuses[0].State.Terminated.FinishedAt = metav1.Unix(at, 0)
		return p
	}
	long := strings.Repeat("x", 2000) + "error: the end"
	// A git build's Job, whose init container fetches the source.
	gitJob := &batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "fetch", Image: "alpine/git:2.47.2"}},
		Containers:     []corev1.Container{{Name: "kaniko", Image: "gcr.io/kaniko-project/executor:v1.23.2"}},
	}}}}
	ended := func(e playact.BuildEnd) []corev1.Pod { return []corev1.Pod{*e.Pod(gitJob, metav1.Now())} }
	const denied = "Cloning into '/workspace/src'...\nfatal: could not read Username for 'https://git.example.com': terminal prompts disabled"

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
		"Pushed": {
			reason: "A pod that reports Kaniko's exit with a digest has pushed the image, before the Job controller says the Job is complete; it completed when Kaniko exited.",
			job:    job("", ""),
			pods:   []corev1.Pod{exited(0, digest+"\n", 7)},
			want:   BuildOutcome{Done: true, Digest: digest, Completed: ptr.To(metav1.Unix(7, 0))},
		},
		"ExitedWithoutDigest": {
			reason: "A pod that exited 0 without a digest waits for the Job, which then fails the build.",
			job:    job("", ""),
			pods:   []corev1.Pod{exited(0, "not a digest", 7)},
			want:   BuildOutcome{},
		},
		"ExitedWithAnError": {
			reason: "A pod that failed is no verdict while the Job runs: the Job may retry it.",
			job:    job("", ""),
			pods:   []corev1.Pod{exited(1, "error building image: exit status 1", 7)},
			want:   BuildOutcome{},
		},
		"CompletedAtTheJobsTime": {
			reason: "A complete Job's completion time is when the build completed.",
			job: func() *batchv1.Job {
				j := job(batchv1.JobComplete, "")
				j.Status.CompletionTime = ptr.To(metav1.Unix(9, 0))
				return j
			}(),
			pods: []corev1.Pod{exited(0, digest, 7)},
			want: BuildOutcome{Done: true, Digest: digest, Completed: ptr.To(metav1.Unix(9, 0))},
		},
		"SucceededWithoutDigest": {
			reason: "A complete Job that reported no digest has failed: nothing can be deployed.",
			job:    job(batchv1.JobComplete, ""),
			pods:   []corev1.Pod{pod(0, "not a digest")},
			want:   BuildOutcome{Failed: true, Message: MsgNoDigest, Cause: CauseNoDigest},
		},
		"FailedWithLog": {
			reason: "A failed Job's message is the end of Kaniko's log, bounded.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods:   []corev1.Pod{pod(1, long)},
			want:   BuildOutcome{Failed: true, Message: "..." + long[len(long)-maxBuildMessage:], Cause: CauseBuild},
		},
		"FailedMidLine": {
			reason: "A bounded message starts at a line of the log, not in the middle of one, as a real Kaniko log's end began with a cut word.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods:   []corev1.Pod{pod(1, strings.Repeat("INFO[0001] Taking snapshot of files...\n", 80)+"error building image: exit status 127")},
			want:   BuildOutcome{Failed: true, Message: "..." + strings.Repeat("INFO[0001] Taking snapshot of files...\n", (maxBuildMessage-len("error building image: exit status 127"))/len("INFO[0001] Taking snapshot of files...\n")) + "error building image: exit status 127", Cause: CauseBuild},
		},
		"RetriedLastWins": {
			reason: "A retried build's message is its newest pod's, whatever the order the API lists its pods in.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods: func() []corev1.Pod {
				first, retry := pod(1, "error: first attempt"), pod(1, "error: the retry")
				first.CreationTimestamp, retry.CreationTimestamp = metav1.Unix(100, 0), metav1.Unix(120, 0)
				return []corev1.Pod{retry, first}
			}(),
			want: BuildOutcome{Failed: true, Message: "error: the retry", Cause: CauseBuild},
		},
		"FailedInColour": {
			reason: "Kaniko's log colours its levels, as the real node showed; the message keeps the words, not the terminal's sequences.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods:   []corev1.Pod{pod(1, "\x1b[36mINFO\x1b[0m[0000] Retrieving image manifest\nerror building image: NAME_UNKNOWN")},
			want:   BuildOutcome{Failed: true, Message: "INFO[0000] Retrieving image manifest\nerror building image: NAME_UNKNOWN", Cause: CauseBuild},
		},
		"FetchFailed": {
			reason: "A fetch that failed in the init container says so, with the end of its log, not the Job's backoff.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods:   ended(playact.FetchFails(128, denied)),
			want:   BuildOutcome{Failed: true, Message: "fetching the source failed (init container fetch exited with 128): " + denied, Cause: CauseFetch},
		},
		"FetchImagePullBackOff": {
			reason: "A running build whose fetch cannot start says why it waits, in the kubelet's words, while its pod can: the Job controller deletes it at the deadline.",
			job:    job("", ""),
			pods:   []corev1.Pod{*playact.FetchPullBackOff(gitJob, "rpc error: code = NotFound")},
			want:   BuildOutcome{Waiting: `fetching the source did not start (init container fetch waits): ImagePullBackOff: Back-off pulling image "alpine/git:2.47.2": ErrImagePull: rpc error: code = NotFound`},
		},
		"FetchRetried": {
			reason: "A running build whose fetch failed, to be retried, says how it failed.",
			job:    job("", ""),
			pods:   ended(playact.FetchFails(128, denied)),
			want:   BuildOutcome{Waiting: "fetching the source failed (init container fetch exited with 128): " + denied},
		},
		"ExecutorPullBackOff": {
			reason: "A running build whose Kaniko image cannot be pulled says so, in the kubelet's words.",
			job:    job("", ""),
			pods: []corev1.Pod{{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
				Name: "kaniko", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}},
			}}}}},
			want: BuildOutcome{Waiting: "the build did not start (container kaniko waits): ErrImagePull: not found"},
		},
		"Starting": {
			reason: "A build whose container is being created is not said to wait.",
			job:    job("", ""),
			pods: []corev1.Pod{{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
				Name: "kaniko", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
			}}}}},
			want: BuildOutcome{},
		},
		"FailedAfterFetch": {
			reason: "A build that fails after its source was fetched says what Kaniko said.",
			job:    job(batchv1.JobFailed, "BackoffLimitExceeded"),
			pods:   ended(playact.KanikoExits(1, "error building image: exit status 1")),
			want:   BuildOutcome{Failed: true, Message: "error building image: exit status 1", Cause: CauseBuild},
		},
		"FailedWithoutPods": {
			reason: "A failed Job whose pods are gone says what the Job controller said.",
			job:    job(batchv1.JobFailed, "DeadlineExceeded"),
			want:   BuildOutcome{Failed: true, Message: "DeadlineExceeded:", Cause: CauseDeadline},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OutcomeOf(tc.job, tc.pods)); diff != "" {
				t.Errorf("%s\nOutcomeOf(...): -want, +got:\n%s", tc.reason, diff)
			}
			if got, want := Finished(tc.job), tc.job.Status.Conditions != nil; got != want {
				t.Errorf("%s\nFinished(...) = %t, want %t", tc.reason, got, want)
			}
		})
	}
}
