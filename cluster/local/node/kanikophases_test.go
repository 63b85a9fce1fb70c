package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// The parts of a build's time, in the order a build goes through them.
const (
	// phasePod is from the Job's creation to Kaniko's start: the pod's
	// scheduling, its fetch init container and the containers' starts.
	phasePod = "pod"
	// phasePull is reading the base images' manifests and config, and
	// planning the stages.
	phasePull = "pull"
	// phaseCache is looking up cached layers in the cache repository and
	// pushing new ones to it.
	phaseCache = "cache"
	// phaseUnpack is extracting a base image's file system.
	phaseUnpack = "unpack"
	// phaseRun is RUN steps: installing dependencies and compiling, and
	// snapshotting what they wrote.
	phaseRun = "run"
	// phaseSteps is every other Dockerfile step, COPY above all.
	phaseSteps = "steps"
	// phasePush is pushing the image and its layers to the registry.
	phasePush = "push"
	// phaseDone is from Kaniko's end until the kubelet's report of it was
	// seen: its next look at the pod's containers, and the half second
	// between two polls.
	phaseDone = "done"
	// phaseJob is from then until the Job was seen finished: the Job
	// controller's report, which the provider no longer waits for.
	phaseJob = "job"
)

// buildPhases are the phases in order.
var buildPhases = []string{phasePod, phasePull, phaseCache, phaseUnpack, phaseRun, phaseSteps, phasePush, phaseDone, phaseJob}

// kanikoPhases is what Kaniko's log lines begin, in its words (pkg/executor
// of Kaniko v1.24.0), by phase; a line that begins none, such as a RUN
// step's own output or a snapshot, goes on with the phase before it.
var kanikoPhases = []struct {
	prefix, phase string
}{
	{"Retrieving image", phasePull}, {"Returning cached image manifest", phasePull},
	{"Built cross stage deps", phasePull}, {"Building stage", phasePull}, {"Executing ", phasePull},
	{"Checking for cached layer", phaseCache}, {"No cached layer found", phaseCache},
	{"Using caching version", phaseCache}, {"Pushing layer", phaseCache},
	{"Unpacking rootfs", phaseUnpack},
	{"RUN ", phaseRun},
	{"Pushing image to", phasePush},
	{"COPY ", phaseSteps}, {"ADD ", phaseSteps}, {"WORKDIR ", phaseSteps}, {"ENV ", phaseSteps},
	{"USER ", phaseSteps}, {"EXPOSE ", phaseSteps}, {"CMD ", phaseSteps}, {"ENTRYPOINT ", phaseSteps},
	{"ARG ", phaseSteps}, {"Saving file", phaseSteps}, {"Storing source image", phaseSteps},
}

// phaseOf is the phase a line of Kaniko's log begins, or "" when it goes on
// with the one before. Kaniko writes its own lines as logrus does,
// "INFO[0003] message", with the level coloured.
func phaseOf(line string) string {
	line = observe.Uncoloured(line)
	_, msg, ok := strings.Cut(line, "] ")
	if !ok || !strings.HasPrefix(line, "INFO[") {
		return ""
	}
	for _, p := range kanikoPhases {
		if strings.HasPrefix(msg, p.prefix) {
			return p.phase
		}
	}
	return ""
}

// splitBuild splits a build's time by phase: the pod's until Kaniko
// started, and then each line of Kaniko's log, as the kubelet stamped it,
// until the next line or until Kaniko finished. Times of the API's
// objects have whole seconds, so the pod's phase is known to a second.
func splitBuild(log []byte, created, started, finished time.Time) (map[string]time.Duration, error) {
	out := map[string]time.Duration{phasePod: started.Sub(created)}
	phase, at := phasePull, started
	s := bufio.NewScanner(bytes.NewReader(log))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		stamp, line, ok := strings.Cut(s.Text(), " ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			return nil, fmt.Errorf("a log line without the kubelet's timestamp: %q", s.Text())
		}
		if t.Before(at) {
			t = at
		}
		out[phase] += t.Sub(at)
		at = t
		if p := phaseOf(line); p != "" {
			phase = p
		}
	}
	if finished.After(at) {
		out[phase] += finished.Sub(at)
	}
	return out, s.Err()
}

// buildSplit reads the Kaniko container's log of the build's last pod, as
// kubectl logs --timestamps does, and splits the build's time by phase,
// its end seen after took.
func buildSplit(ctx context.Context, t testing.TB, c *Cluster, job *batchv1.Job, pods []corev1.Pod, took time.Duration) map[string]time.Duration {
	t.Helper()
	pod := slices.MaxFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var ended *corev1.ContainerStateTerminated
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == render.ContainerKaniko {
			ended = s.State.Terminated
		}
	}
	if ended == nil {
		t.Fatalf("pod %s has no ended %s container", pod.Name, render.ContainerKaniko)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	log, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: render.ContainerKaniko, Timestamps: true}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	split, err := splitBuild(log, job.CreationTimestamp.Time, ended.StartedAt.Time, ended.FinishedAt.Time)
	if err != nil {
		t.Fatal(err)
	}
	split[phaseDone] = took
	for p, d := range split {
		if p != phaseDone {
			split[phaseDone] -= d
		}
	}
	return split
}

func TestSplitBuild(t *testing.T) {
	at := func(s float64) time.Time {
		return time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
	}
	line := func(s float64, text string) string { return at(s).Format(time.RFC3339Nano) + " " + text + "\n" }
	cases := map[string]struct {
		reason string
		log    string
		want   map[string]time.Duration
		err    bool
	}{
		"Phases": {
			reason: "Each of Kaniko's lines, coloured or not, counts to the phase it begins until the next, and the last until Kaniko finished; the pod's phase is until Kaniko started.",
			log: line(10, "\x1b[36mINFO\x1b[0m[0000] Retrieving image manifest 10.87.0.2:5000/library/python:3.11") +
				line(10.5, "INFO[0000] Checking for cached layer 10.87.0.2:5000/cache/apps:abc...") +
				line(11, "\x1b[36mINFO\x1b[0m[0001] Unpacking rootfs as cmd COPY src/ /app/ requires it.") +
				line(13, "INFO[0003] COPY src/ /app/") +
				line(13.5, "INFO[0003] RUN if [ -f requirements.txt ]; then pip install; fi") +
				line(14, "Collecting requests") +
				line(16, "INFO[0006] Pushing layer 10.87.0.2:5000/cache/apps:def to cache now") +
				line(16.5, "INFO[0006] Pushing image to 10.87.0.2:5000/lambdas/apps/hello:abc") +
				line(17.5, "INFO[0007] Pushed 10.87.0.2:5000/lambdas/apps/hello@sha256:0"),
			want: map[string]time.Duration{
				phasePod: 10 * time.Second, phasePull: 500 * time.Millisecond, phaseCache: time.Second,
				phaseUnpack: 2 * time.Second, phaseSteps: 500 * time.Millisecond, phaseRun: 2500 * time.Millisecond,
				phasePush: 1500 * time.Millisecond,
			},
		},
		"NoStamp": {
			reason: "A line without the kubelet's timestamp is an error: the log was not read with timestamps.",
			log:    "INFO[0000] Retrieving image manifest 10.87.0.2:5000/library/python:3.11\n",
			err:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := splitBuild([]byte(tc.log), at(0), at(10), at(18))
			if (err != nil) != tc.err {
				t.Fatalf("%s\nsplitBuild(...): error %v, want an error: %t", tc.reason, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nsplitBuild(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
