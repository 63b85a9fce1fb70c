// Package playact plays the controllers the local control plane does not run:
// the Job controller and the kubelet for build Jobs, and Knative for
// Services, Brokers and Triggers. Each writes status exactly as the real
// controller would, through the status subresource, so the code under test
// reads what it would read in a cluster.
package playact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// FinishJob plays the Job controller and the kubelet: a pod of the Job whose
// kaniko container terminated with the exit code and message, and the Job's
// terminal conditions, as Kubernetes writes them.
func FinishJob(ctx context.Context, t T, c client.Client, job *batchv1.Job, exitCode int32, message string) {
	t.Helper()
	EndJob(ctx, t, c, job, KanikoExits(exitCode, message))
}

// StartJob plays the Job controller taking up a new Job: the status it
// writes once it has made the Job's pod, before the kubelet reports on it.
func StartJob(ctx context.Context, t T, c client.Client, job *batchv1.Job) {
	t.Helper()
	startJobAt(ctx, t, c, job, metav1.Now())
}

// startJobAt plays StartJob at a time of its own.
func startJobAt(ctx context.Context, t T, c client.Client, job *batchv1.Job, at metav1.Time) {
	t.Helper()
	Started(job, at)
	if err := c.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

// Started sets a Job's status, without writing it, to what StartJob writes
// of a Job started at the time: one pod, not yet ready.
func Started(job *batchv1.Job, at metav1.Time) {
	job.Status.StartTime = &at
	job.Status.Active = 1
	job.Status.Ready = new(int32(0))
	job.Status.Terminating = new(int32(0))
	job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
}

// A BuildEnd is how the kubelet reports a build pod at its end, and so how
// the Job controller ends the Job.
type BuildEnd struct {
	pod func(job *batchv1.Job, now metav1.Time) corev1.PodStatus
	// reason and message of a failed Job's conditions.
	reason, message string
}

// How the Job controller ends a Job whose pod failed, and one whose pod
// succeeded; and how the kubelet says a container ended (held to the real
// ones by cluster/local/node's TestPlayedBuildEndsAsReal).
const (
	reasonBackoffLimit  = "BackoffLimitExceeded"
	messageBackoffLimit = "Job has reached the specified backoff limit"
	reasonCompletions   = "CompletionsReached"
	messageCompletions  = "Reached expected number of succeeded pods"
	reasonJobTimeout    = "DeadlineExceeded"
	messageJobTimeout   = "Job was active longer than specified deadline"
	reasonExitedZero    = "Completed"
	reasonExitedNonZero = "Error"
)

// KanikoExits is a build whose source was fetched, if it had to be, and
// whose kaniko container terminated with the exit code and message.
func KanikoExits(exitCode int32, message string) BuildEnd {
	return BuildEnd{reason: reasonBackoffLimit, message: messageBackoffLimit, pod: func(job *batchv1.Job, now metav1.Time) corev1.PodStatus {
		phase, reason := corev1.PodSucceeded, reasonExitedZero
		if exitCode != 0 {
			phase, reason = corev1.PodFailed, reasonExitedNonZero
		}
		st := corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
			Name: render.ContainerKaniko, Image: job.Spec.Template.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: reason, Message: message, StartedAt: now, FinishedAt: now}},
		}}}
		for _, ic := range job.Spec.Template.Spec.InitContainers {
			st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: ic.Name, Image: ic.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reasonExitedZero, StartedAt: now, FinishedAt: now}}})
		}
		return st
	}}
}

// FetchFails is a build whose source fetch, the init container, exited
// with the exit code and the end of its log as its termination message;
// kaniko never started.
func FetchFails(exitCode int32, log string) BuildEnd {
	return BuildEnd{reason: reasonBackoffLimit, message: messageBackoffLimit, pod: func(job *batchv1.Job, now metav1.Time) corev1.PodStatus {
		return corev1.PodStatus{
			Phase:                 corev1.PodFailed,
			InitContainerStatuses: initStatuses(job, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: reasonExitedNonZero, Message: log, StartedAt: now, FinishedAt: now}}),
			ContainerStatuses:     kanikoInitializing(job),
		}
	}}
}

// DeadlineExceeded is a build still running at its deadline: the Job
// controller fails the Job in its words and deletes the pod, so no pod
// says why it had not ended (TestPlayedBuildEndsAsReal).
func DeadlineExceeded() BuildEnd {
	return BuildEnd{reason: reasonJobTimeout, message: messageJobTimeout}
}

// FetchPullBackOff is the Job's build pod as the kubelet reports it while
// it cannot pull its fetch image, without writing it: the init container
// waits with the kubelet's message (pkg/kubelet/images), until the Job's
// deadline (DeadlineExceeded).
func FetchPullBackOff(job *batchv1.Job, pullError string) *corev1.Pod {
	image := job.Spec.Template.Spec.InitContainers[0].Image
	return buildPod(job, corev1.PodStatus{
		Phase: corev1.PodPending,
		InitContainerStatuses: initStatuses(job, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: pullBackOff(image, pullError),
		}}),
		ContainerStatuses: kanikoInitializing(job),
	})
}

// Pod is the Job's build pod as the kubelet reports it at this end, at now,
// without writing it; nil for an end that leaves none.
func (e BuildEnd) Pod(job *batchv1.Job, now metav1.Time) *corev1.Pod {
	if e.pod == nil {
		return nil
	}
	return buildPod(job, e.pod(job, now))
}

// buildPod is a pod of the Job, as the Job controller makes it, with the
// status.
func buildPod(job *batchv1.Job, status corev1.PodStatus) *corev1.Pod {
	lbls := maps.Clone(job.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls["batch.kubernetes.io/job-name"] = job.Name
	lbls["job-name"] = job.Name
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: job.Namespace, GenerateName: job.Name + "-", Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec:   job.Spec.Template.Spec,
		Status: status,
	}
}

// initStatuses are the statuses of a Job's init containers, each in state.
func initStatuses(job *batchv1.Job, state corev1.ContainerState) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, ic := range job.Spec.Template.Spec.InitContainers {
		out = append(out, corev1.ContainerStatus{Name: ic.Name, Image: ic.Image, State: state})
	}
	return out
}

// kanikoInitializing is the kaniko container waiting for init containers.
func kanikoInitializing(job *batchv1.Job) []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: render.ContainerKaniko, Image: job.Spec.Template.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
}

// EndJob plays the Job controller and the kubelet ending a build: a pod of
// the Job as the kubelet reports it at the end, and the Job's terminal
// conditions, as Kubernetes writes them.
func EndJob(ctx context.Context, t T, c client.Client, job *batchv1.Job, end BuildEnd) {
	t.Helper()
	now := metav1.Now()
	// The Job controller starts a Job before its pod runs, and the
	// provider may read the Job as soon as the kubelet reports the pod.
	if job.Status.StartTime == nil {
		startJobAt(ctx, t, c, job, metav1.NewTime(now.Add(-time.Minute)))
	}
	var phase corev1.PodPhase
	if end.pod != nil {
		phase = ReportPod(ctx, t, c, job, end, now).Status.Phase
	}
	// It has no pod active once the Job ends.
	job.Status.Active = 0
	switch phase { //nolint:exhaustive // A pod that did not end leaves the Job running to its deadline.
	case corev1.PodSucceeded:
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
	case corev1.PodFailed:
		job.Status.Failed = 1
	}
	job.Status.Conditions = end.JobConditions(phase, now)
	if err := c.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

// ReportPod plays the kubelet alone reporting a build pod at its end, at
// now: the Job controller has yet to end the Job, as it does a second or
// two later.
func ReportPod(ctx context.Context, t T, c client.Client, job *batchv1.Job, end BuildEnd, now metav1.Time) *corev1.Pod {
	t.Helper()
	pod := end.Pod(job, now)
	status := pod.Status
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = status
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// JobConditions are the terminal conditions the Job controller writes of a
// build Job whose pod ended in phase.
func (e BuildEnd) JobConditions(phase corev1.PodPhase, now metav1.Time) []batchv1.JobCondition {
	if phase == corev1.PodSucceeded {
		return []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: reasonCompletions, Message: messageCompletions, LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: reasonCompletions, Message: messageCompletions, LastProbeTime: now, LastTransitionTime: now},
		}
	}
	return []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: e.reason, Message: e.message, LastProbeTime: now, LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: e.reason, Message: e.message, LastProbeTime: now, LastTransitionTime: now},
	}
}

// MarkServiceReady plays Knative Serving rolling out the Service's current
// generation: its Revision is Ready and serves at the URL it returns.
func MarkServiceReady(ctx context.Context, t T, c client.Client, svc *servingv1.Service) string {
	t.Helper()
	return RollOut(ctx, t, c, svc, nil)
}

// MarkEventingReady plays Knative Eventing: a Broker or Trigger is Ready, and
// a Broker has its ingress address.
func MarkEventingReady(ctx context.Context, t T, c client.Client, obj client.Object) {
	t.Helper()
	address := ""
	if obj.GetObjectKind().GroupVersionKind().Kind == "Broker" {
		address = brokerAddress(obj)
	}
	patch, err := json.Marshal(map[string]any{"status": readyStatus(obj.GetGeneration(), address)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// SettleBroker sets a Broker's status, without writing it, to what
// MarkEventingReady writes of it.
func SettleBroker(b *eventingv1.Broker) error {
	raw, err := json.Marshal(readyStatus(b.Generation, brokerAddress(b)))
	if err != nil {
		return err
	}
	b.Status = eventingv1.BrokerStatus{}
	return json.Unmarshal(raw, &b.Status)
}

// readyStatus is the status of a Ready Broker or Trigger of the
// generation: a Broker's has its address.
func readyStatus(generation int64, address string) map[string]any {
	status := map[string]any{"observedGeneration": generation, "conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)},
	}}
	if address != "" {
		status["address"] = map[string]any{"url": address}
	}
	return status
}

// brokerAddress is the MT channel-based broker's ingress address of a
// Broker.
func brokerAddress(b client.Object) string {
	return "http://broker-ingress.knative-eventing.svc.cluster.local/" + b.GetNamespace() + "/" + b.GetName()
}

// A T is where a play reports that it could not write: a test's testing.TB,
// or a benchmark program's own.
type T interface {
	Helper()
	Fatal(args ...any)
}

// Try runs a play outside a test and returns the error it stopped at, for
// programs and loops that retry instead of failing.
func Try(play func(T)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	play(player{})
	return nil
}

// A player is the T of Try: Fatal ends the play with an error.
type player struct{}

type fatal struct{ err error }

func (player) Helper() {}

func (player) Fatal(args ...any) { panic(fatal{err: errors.New(fmt.Sprint(args...))}) }
