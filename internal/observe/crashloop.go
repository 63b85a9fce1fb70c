package observe

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// crashRestarts is how often a container must have been restarted to be
// judged crash-looping: it exited three times.
const crashRestarts = 2

// LabelRevision is the label Knative gives a Revision's pods.
const LabelRevision = "serving.knative.dev/revision"

// queueProxy is the container Knative adds to every Revision's pod; the
// others run the workload's code.
const queueProxy = "queue-proxy"

// crashTail is how much of what a crashing container last said a message
// keeps: the end of a traceback.
const crashTail = 512

// CrashLoop says why a Revision's pod cannot serve when the container that
// runs the workload's code keeps exiting: its exit code, how often it was
// restarted, and the end of what it last wrote, which Knative has the
// kubelet keep as the termination message. The kubelet reports the exit as
// the container's state until it restarts it, and then, while it backs off,
// as its last state (CrashLoopBackOff); both are read. Knative itself marks
// such a Revision failed only when its Deployment's status changes, which a
// crash loop does not do, so it may wait for its progress deadline (10
// minutes unless the platform set another). It is empty for a pod that is
// not crash-looping.
func CrashLoop(pod *corev1.Pod) string {
	for _, s := range pod.Status.ContainerStatuses {
		t := s.State.Terminated
		if w := s.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
			t = s.LastTerminationState.Terminated
		}
		if s.Name == queueProxy || s.RestartCount < crashRestarts || t == nil || t.ExitCode == 0 {
			continue
		}
		msg := fmt.Sprintf("container %s keeps exiting: code %d, restarted %d times", s.Name, t.ExitCode, s.RestartCount)
		if m := orReason(t.Message, t.Reason); m != "" {
			msg += ": " + tail(m, crashTail)
		}
		return msg
	}
	return ""
}

// Unready is the latest Revision of a Service while it does not serve, whose
// pods CrashLoop reads: while Knative has yet to say whether it serves, and
// after it said the Revision failed, which may be stale. Knative judges a
// Revision only when its Deployment's status changes, so one it failed
// Unschedulable stays so once its pod is scheduled and keeps exiting. It is
// empty when the latest Revision serves.
func Unready(svc *servingv1.Service) string {
	st := svc.Status
	name := st.LatestCreatedRevisionName
	if name == "" || name == st.LatestReadyRevisionName || st.GetCondition(servingv1.ServiceConditionConfigurationsReady).IsTrue() {
		return ""
	}
	return name
}
