package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// An ending is what a test compares of how a build Job ended: its
// conditions, its pod's phase, its fetch's and its kaniko container's end,
// and what observe reads of it, without times and names.
type ending struct {
	Conditions []batchv1.JobCondition
	Phase      corev1.PodPhase
	Kaniko     corev1.ContainerStateTerminated
	// Fetch is how each init container, which fetches a git or S3
	// source, ended or why it waits.
	Fetch   []corev1.ContainerState
	Outcome observe.BuildOutcome
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
	for _, cs := range last.Status.InitContainerStatuses {
		var st corev1.ContainerState
		switch {
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			st.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message}
		case cs.State.Waiting != nil:
			st.Waiting = cs.State.Waiting
		default:
			st.Running = &corev1.ContainerStateRunning{}
		}
		e.Fetch = append(e.Fetch, st)
	}
	return e
}

// kanikoEnd is how playact ends a build whose kaniko container ended as
// the real one's did.
func kanikoEnd(real ending) playact.BuildEnd {
	return playact.KanikoExits(real.Kaniko.ExitCode, real.Kaniko.Message)
}

// fetchEnd is the end of the first init container of an ending that has
// one.
func fetchEnd(e ending) corev1.ContainerStateTerminated {
	if len(e.Fetch) == 0 || e.Fetch[0].Terminated == nil {
		return corev1.ContainerStateTerminated{}
	}
	return *e.Fetch[0].Terminated
}

// refusing is a git repository on a port of the node that refuses
// connections.
var refusing = "https://" + NodeIP + ":1/team/orders.git"

// fetchedFrom changes a function to fetch its code from a git repository
// at url, at a commit the provider would have resolved.
func fetchedFrom(url string) func(*v1alpha1.LambdaFunctionParameters) {
	return func(p *v1alpha1.LambdaFunctionParameters) {
		p.Source = v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: url, Ref: "main"}}
	}
}

// TestPlayedBuildEndsAsReal holds playact to the real Job controller,
// kubelet and Kaniko: a build that succeeds, one whose base image does not
// exist, one whose source fetch fails and one whose fetcher's image cannot
// be pulled end on the real node with Job conditions, a pod and its
// containers' ends that playact writes alike for the same exit code and
// message, and observe reads both alike; the last is started as playact
// starts a Job. The tests that play builds on the API server alone stand on
// this.
func TestPlayedBuildEndsAsReal(t *testing.T) {
	t.Parallel()
	pullError := fmt.Sprintf("rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", missingImage, missingImage, missingImage)
	cases := map[string]struct {
		reason   string
		base     func(ref string) string
		defaults func(*render.Defaults)
		change   func(*v1alpha1.LambdaFunctionParameters)
		// end is how playact ends the build of what the real one ended.
		end func(real ending) playact.BuildEnd
		// waits, when set, is the pod playact writes of a build that waits
		// until the Job's deadline, held to the real one while it waits.
		waits func(*batchv1.Job) *corev1.Pod
	}{
		"Succeeds": {
			reason: "A build that pushes its image completes, and its digest is read from the termination message.",
			end:    kanikoEnd,
		},
		"BaseImageMissing": {
			reason: "A build whose base image is not in the registry fails after its retry, with Kaniko's own words at the end of its log.",
			base:   func(string) string { return unknownTag },
			end:    kanikoEnd,
		},
		"FetchFails": {
			reason: "A build whose git server refuses connections fails after its retry, in its fetch, with git's words at the end of its log, and Kaniko never starts.",
			change: fetchedFrom(refusing),
			end: func(real ending) playact.BuildEnd {
				return playact.FetchFails(fetchEnd(real).ExitCode, fetchEnd(real).Message)
			},
		},
		"FetchImagePullBackOff": {
			reason:   "A build whose fetcher's image cannot be pulled waits, with the kubelet's and containerd's words, until its deadline, when the Job controller fails it and deletes its pod.",
			defaults: func(d *render.Defaults) { d.GitFetcherImage = missingImage },
			change: func(p *v1alpha1.LambdaFunctionParameters) {
				fetchedFrom(refusing)(p)
				p.Build = &v1alpha1.Build{Timeout: ptr.To(v1alpha1.GoDuration("40s"))}
			},
			end:   func(ending) playact.BuildEnd { return playact.DeadlineExceeded() },
			waits: func(job *batchv1.Job) *corev1.Pod { return playact.FetchPullBackOff(job, pullError) },
		},
	}
	// The subtests run once this returns, each in its own time.
	published, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	publishFetcher(published, t, sharedCluster(t))
	cancel()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c, kube := sharedCluster(t), targetClient(t)
			rt := runtimes["Python3.11"]
			base := publishBase(ctx, t, c, rt)
			if tc.base != nil {
				base = tc.base(base)
			}
			var changes []func(*v1alpha1.LambdaFunctionParameters)
			if tc.change != nil {
				changes = append(changes, tc.change)
			}
			ns := testkit.Namespace(ctx, t, kube, "functions-", "")
			objs := renderIn(t, ns, rt, base, tc.defaults, nil, changes...)
			createBuild(ctx, t, kube, objs)
			if tc.waits != nil {
				// Its pod waits for the image long enough to read it, and
				// the Job as the Job controller started it.
				job, pods := awaitBuild(ctx, t, kube, objs.BuildJob, func(job *batchv1.Job, pods []corev1.Pod) bool {
					e := endingOf(job, pods)
					return job.Status.StartTime != nil && len(e.Fetch) > 0 && e.Fetch[0].Waiting != nil && e.Fetch[0].Waiting.Reason == "ImagePullBackOff"
				})
				played := job.DeepCopy()
				playact.Started(played, *job.Status.StartTime)
				if diff := cmp.Diff(job.Status, played.Status); diff != "" {
					t.Errorf("A Job whose pod waits is started as playact starts it: -real, +played:\n%s", diff)
				}
				if diff := cmp.Diff(endingOf(job, pods), endingOf(job, []corev1.Pod{*tc.waits(job)})); diff != "" {
					t.Errorf("%s\nplayact's waiting pod: -real, +played:\n%s", tc.reason, diff)
				}
			}
			job, pods := awaitBuild(ctx, t, kube, objs.BuildJob, jobFinished)
			real := endingOf(job, pods)
			t.Logf("the real build ended: %+v", real)

			now := metav1.Now()
			end := tc.end(real)
			played := job.DeepCopy()
			var playedPods []corev1.Pod
			var phase corev1.PodPhase
			if pod := end.Pod(job, now); pod != nil {
				playedPods, phase = []corev1.Pod{*pod}, pod.Status.Phase
			}
			played.Status.Conditions = end.JobConditions(phase, now)
			if diff := cmp.Diff(real, endingOf(played, playedPods)); diff != "" {
				t.Errorf("%s\nplayact's ending: -real, +played:\n%s", tc.reason, diff)
			}
		})
	}
}
