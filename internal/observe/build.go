package observe

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelJobName is how the Job controller labels a Job's pods.
const LabelJobName = "batch.kubernetes.io/job-name"

// MsgNoDigest says a build succeeded without reporting what it pushed.
const MsgNoDigest = "the build reported success but no image digest: its termination message is not a sha256 digest"

// What a build says when its source fetch did not run to the end.
const (
	fmtFetchFailed = "fetching the source failed (init container %s exited with %d): %s"
	fmtFetchWaits  = "fetching the source did not start (init container %s waits): %s"
	fmtBuildWaits  = "the build did not start (container %s waits): %s"
)

// maxBuildMessage bounds how much of Kaniko's log a status carries.
const maxBuildMessage = 1024

var digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// colours are the terminal's colour sequences Kaniko's log writes by
// default ("\x1b[36mINFO\x1b[0m"), which would reach conditions and
// events as they are.
var colours = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Uncoloured is Kaniko's log without its colour sequences.
func Uncoloured(log string) string {
	return colours.ReplaceAllString(log, "")
}

// Causes of a failed build, a bounded set for metrics and alerts.
const (
	CauseBuild       = "build"
	CauseFetch       = "fetch"
	CauseFetchImage  = "fetch-not-started"
	CauseDeadline    = "deadline"
	CauseNoDigest    = "no-digest"
	CauseJob         = "job"
	reasonJobTimeout = "DeadlineExceeded"
)

// Causes lists every cause a failed build may have.
var Causes = []string{CauseBuild, CauseFetch, CauseFetchImage, CauseDeadline, CauseNoDigest, CauseJob}

// A BuildOutcome is what a build Job says of itself.
type BuildOutcome struct {
	Done, Failed bool
	Digest       string
	Message      string
	// Cause of a failed build: which part failed.
	Cause string
	// Waiting says why a build that has not ended is not getting on: its
	// newest pod's fetch failed and will be retried, or a container waits,
	// such as for an image the kubelet cannot pull. The Job controller
	// deletes a waiting pod at the build's deadline, so this is when its
	// words can be read (TestPlayedBuildEndsAsReal).
	Waiting string
	// Completed is when a build that is done completed: the Job's
	// completion time, or Kaniko's exit before the Job controller has
	// written one.
	Completed *metav1.Time
}

// Finished reports whether a Job has reached a terminal condition, after
// which its pods say how it went.
func Finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			return true
		}
	}
	return false
}

// OutcomeOf reads a build Job's conditions and its pods' termination messages:
// the digest on success (Kaniko writes it with
// --digest-file=/dev/termination-log), the end of Kaniko's log on failure.
// A build is done as soon as a pod reports Kaniko's exit with a digest: the
// Job controller, which batches pod updates for a second, says so a second
// or two later and adds nothing. A failure waits for the Job, which may
// retry. A source fetch that failed in an init container says so with the
// end of its log, and a container that never started says why it waits (an
// image that cannot be pulled), as soon as its pod says so. A Job that
// completed without a digest has failed: nothing can be deployed.
func OutcomeOf(job *batchv1.Job, pods []corev1.Pod) BuildOutcome {
	var o BuildOutcome
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type { //nolint:exhaustive // Only the terminal conditions matter.
		case batchv1.JobComplete:
			o.Done = true
		case batchv1.JobFailed:
			o.Failed, o.Message, o.Cause = true, strings.TrimSpace(c.Reason+": "+c.Message), CauseJob
			if c.Reason == reasonJobTimeout {
				o.Cause = CauseDeadline
			}
		}
	}
	// The newest pod's words win: a retried build's last attempt.
	pods = slices.SortedStableFunc(slices.Values(pods), func(a, b corev1.Pod) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	if !o.Done && !o.Failed {
		o = pushed(job, pods)
		if !o.Done && len(pods) > 0 {
			o.Waiting = waits(pods[len(pods)-1])
		}
		return o
	}
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			t := cs.State.Terminated
			if t == nil {
				continue
			}
			msg := strings.TrimSpace(t.Message)
			switch {
			case o.Done && t.ExitCode == 0 && digestPattern.MatchString(msg):
				o.Digest, o.Completed = msg, completed(job, t)
			case o.Failed && t.ExitCode != 0 && msg != "":
				o.Message, o.Cause = tail(msg, maxBuildMessage), CauseBuild
			}
		}
		if o.Failed {
			if msg, cause := initFailure(p); msg != "" {
				o.Message, o.Cause = msg, cause
			}
		}
	}
	if o.Done && o.Digest == "" {
		o.Done, o.Failed, o.Message, o.Cause = false, true, MsgNoDigest, CauseNoDigest
	}
	return o
}

// pushed is the outcome of a build whose Job has not finished: done when a
// pod's containers all exited 0 and one reported a digest, and nothing yet
// otherwise.
func pushed(job *batchv1.Job, pods []corev1.Pod) BuildOutcome {
	for _, p := range slices.Backward(pods) {
		var digest string
		var at *corev1.ContainerStateTerminated
		for _, cs := range p.Status.ContainerStatuses {
			t := cs.State.Terminated
			if t == nil || t.ExitCode != 0 {
				digest = ""
				break
			}
			if msg := strings.TrimSpace(t.Message); digestPattern.MatchString(msg) {
				digest, at = msg, t
			}
		}
		if digest != "" {
			return BuildOutcome{Done: true, Digest: digest, Completed: completed(job, at)}
		}
	}
	return BuildOutcome{}
}

// completed is when a build completed: the Job's completion time, or the
// exit of the container that reported the digest.
func completed(job *batchv1.Job, t *corev1.ContainerStateTerminated) *metav1.Time {
	if c := job.Status.CompletionTime; c != nil {
		return c
	}
	if t.FinishedAt.IsZero() {
		return nil
	}
	at := t.FinishedAt
	return &at
}

// initFailure says why a build pod's init containers, which fetch its
// source, did not let the build start: one that exited with an error, or
// one that waits, such as for an image the kubelet cannot pull. It is empty
// when they all ran; cause says which.
func initFailure(p corev1.Pod) (msg, cause string) {
	for _, cs := range p.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf(fmtFetchFailed, cs.Name, t.ExitCode, tail(orReason(t.Message, t.Reason), maxBuildMessage)), CauseFetch
		}
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" {
			return fmt.Sprintf(fmtFetchWaits, cs.Name, joined(w.Reason, w.Message)), CauseFetchImage
		}
	}
	return "", ""
}

// waits says why a build pod that has not ended is not getting on: its
// fetch failed (initFailure), or a container waits for something other
// than its turn.
func waits(p corev1.Pod) string {
	if msg, _ := initFailure(p); msg != "" {
		return msg
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" && w.Reason != "ContainerCreating" {
			return fmt.Sprintf(fmtBuildWaits, cs.Name, joined(w.Reason, w.Message))
		}
	}
	return ""
}

// orReason is a termination message, or its reason when it has none.
func orReason(msg, reason string) string {
	if m := strings.TrimSpace(msg); m != "" {
		return m
	}
	return reason
}

// tail keeps the end of a log, where the error is, from the start of a
// line when the end holds more than one.
func tail(s string, n int) string {
	s = Uncoloured(s)
	if len(s) <= n {
		return s
	}
	end := s[len(s)-n:]
	if i := strings.IndexByte(end, '\n'); i >= 0 && i < len(end)-1 {
		end = end[i+1:]
	}
	return "..." + end
}
