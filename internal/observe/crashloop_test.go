package observe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// crashing is a container status as the kubelet writes it for a container
// that exited and whose restart it backs off.
func crashing(name string, restarts int32, exit int32, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:                 name,
		RestartCount:         restarts,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error", Message: msg}},
	}
}

func TestCrashLoop(t *testing.T) {
	const prefix = "container function keeps exiting: code 1, restarted 2 times: "
	cases := map[string]struct {
		reason   string
		statuses []corev1.ContainerStatus
		want     string
	}{
		"BackingOff": {
			reason:   "A container the kubelet backs off restarting says its exit code, restarts and last words, from its last state.",
			statuses: []corev1.ContainerStatus{crashing("function", 2, 1, "RuntimeError: refusing to start\n")},
			want:     prefix + "RuntimeError: refusing to start",
		},
		"JustExited": {
			reason:   "A container that exited again, before the kubelet restarts it, says so from its state.",
			statuses: []corev1.ContainerStatus{exited("function", 2, 1, "RuntimeError: refusing to start")},
			want:     prefix + "RuntimeError: refusing to start",
		},
		"NoMessage": {
			reason:   "Without a termination message, the kubelet's reason for the exit.",
			statuses: []corev1.ContainerStatus{crashing("function", 3, 137, "")},
			want:     "container function keeps exiting: code 137, restarted 3 times: Error",
		},
		"LongMessage": {
			reason:   "A long traceback keeps its end, where the error is.",
			statuses: []corev1.ContainerStatus{crashing("function", 2, 1, strings.Repeat("x", 2000)+"ValueError: bad")},
			want:     prefix + "..." + strings.Repeat("x", crashTail-len("ValueError: bad")) + "ValueError: bad",
		},
		"FirstExits": {
			reason:   "A container restarted once is not in a loop yet.",
			statuses: []corev1.ContainerStatus{exited("function", 1, 1, "boom")},
		},
		"ExitedCleanly": {
			reason:   "A container that exited with code 0 did not crash.",
			statuses: []corev1.ContainerStatus{exited("function", 2, 0, "")},
		},
		"QueueProxy": {
			reason:   "Knative's queue-proxy is not the workload's code.",
			statuses: []corev1.ContainerStatus{crashing("queue-proxy", 2, 1, "boom")},
		},
		"Running": {
			reason:   "A running container is not crash-looping.",
			statuses: []corev1.ContainerStatus{{Name: "function", RestartCount: 3, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CrashLoop(&corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: tc.statuses}})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCrashLoop(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// exited is a container status as the kubelet writes it for a container
// that exited and is yet to be restarted.
func exited(name string, restarts, exit int32, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:         name,
		RestartCount: restarts,
		State:        corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Error", Message: msg}},
	}
}

func TestWithCrashLoop(t *testing.T) {
	const crash = "container function keeps exiting: code 1, restarted 2 times: boom"
	cases := map[string]struct {
		reason string
		s      ServiceState
		crash  string
		want   ServiceState
	}{
		"NewRevisionCrashes": {
			reason: "A new Revision whose pod crash-loops fails, while the one before serves.",
			s:      ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003", Serving: true, Message: "RevisionMissing"},
			crash:  crash,
			want:   ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003", Serving: true, Failed: true, Message: "Revision hello-00004: " + crash},
		},
		"KnativeSaidBefore": {
			reason: "A Revision Knative failed Unschedulable whose pod was scheduled since and keeps exiting fails for its crash loop: Knative does not look again.",
			s:      ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003", Failed: true, Message: "Revision hello-00004: Unschedulable: 0/1 nodes are available: 1 Insufficient example.com/room. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
			crash:  crash,
			want:   ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003", Failed: true, Message: "Revision hello-00004: " + crash},
		},
		"RouteFailed": {
			reason: "A Route's own failure stands: the Revision it cannot route to is another.",
			s:      ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003", RouteFailed: true, Message: `RevisionMissing: Revision "hello-00009" referenced in traffic not found.`},
			crash:  crash,
			want:   ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003", RouteFailed: true, Message: `RevisionMissing: Revision "hello-00009" referenced in traffic not found.`},
		},
		"LatestReady": {
			reason: "A Revision that is ready does not fail for one pod's crash.",
			s:      ServiceState{LatestCreatedRevision: "hello-00003", LatestReadyRevision: "hello-00003", Serving: true},
			crash:  crash,
			want:   ServiceState{LatestCreatedRevision: "hello-00003", LatestReadyRevision: "hello-00003", Serving: true},
		},
		"NoCrash": {
			reason: "Without a crash loop, the state is Knative's.",
			s:      ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003"},
			want:   ServiceState{LatestCreatedRevision: "hello-00004", LatestReadyRevision: "hello-00003"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.s.WithCrashLoop(tc.crash)); diff != "" {
				t.Errorf("%s\nWithCrashLoop(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
