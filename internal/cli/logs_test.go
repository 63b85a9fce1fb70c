package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/serving/pkg/apis/serving"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestLogs reads pods' logs with kubectl lambda logs through kube-apiserver's
// pods/log, which reaches a played kubelet registered as a Node: a
// function's container, its build's fetch and Kaniko containers, and a log
// followed while it grows.
func TestLogs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newScene(ctx, t)
	node := "node-" + s.namespace
	if err := kubelet.Register(ctx, s.kube, node); err != nil {
		t.Fatal(err)
	}
	const job = "greeter-build-1bc7aa0ce2a0"
	fn := newFunction(s.namespace, "greeter")
	if err := s.kube.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	fn.Status.AtProvider.Phase = v1alpha1.PhaseReady
	fn.Status.AtProvider.Build = &v1alpha1.BuildObservation{Identity: identity, JobName: job}
	if err := s.kube.Status().Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
	idle := newFunction(s.namespace, "idle")
	if err := s.kube.Create(ctx, idle); err != nil {
		t.Fatal(err)
	}

	// Pods as Knative and the Job controller make them, on the node.
	pod := func(name string, labels map[string]string, init []string, containers ...string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
		for _, c := range init {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: c, Image: "registry.test/" + c})
		}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "registry.test/" + c})
		}
		if err := s.kube.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	const servingPod, buildPod = "greeter-00001-deployment-7d4b9-x2x4z", job + "-q8k2m"
	pod(servingPod, map[string]string{serving.ServiceLabelKey: "greeter"}, nil, render.ContainerFunction, "queue-proxy")
	pod(buildPod, map[string]string{batchv1.JobNameLabel: job}, []string{render.ContainerFetch}, render.ContainerKaniko)
	invocation := `{"level":"info","msg":"invocation","id":"1","outcome":"replied"}` + "\n"
	kubelet.Log(s.namespace, servingPod, render.ContainerFunction, invocation, false)
	kubelet.Log(s.namespace, servingPod, "queue-proxy", "queue-proxy's own log\n", true)
	kubelet.Log(s.namespace, buildPod, render.ContainerFetch, "fetched 3 objects\n", true)
	kubelet.Log(s.namespace, buildPod, render.ContainerKaniko, "INFO[0001] Retrieving image manifest python:3.12-slim\n", true)

	cases := map[string]struct {
		reason  string
		args    []string
		want    string
		wantErr string
	}{
		"Workload": {
			reason: "One pod's function container is read, without a prefix; queue-proxy's is not.",
			args:   []string{"logs", "greeter"},
			want:   invocation,
		},
		"Build": {
			reason: "The build's fetch and Kaniko containers are read in order, each line prefixed.",
			args:   []string{"logs", "greeter", "--build"},
			want: "[" + buildPod + "/fetch] fetched 3 objects\n" +
				"[" + buildPod + "/kaniko] INFO[0001] Retrieving image manifest python:3.12-slim\n",
		},
		"NoPods": {
			reason:  "A function scaled to zero has no pods to read, and says why.",
			args:    []string{"logs", "idle"},
			wantErr: "has no pods now: Knative scales a workload without traffic to zero",
		},
		"NoBuild": {
			reason:  "A function that has no build says so.",
			args:    []string{"logs", "idle", "--build"},
			wantErr: "it has no build",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := s.kubectlLambda(ctx, time.Now(), tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s\n%v: error %v, want %q", tc.reason, tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v: %v", tc.reason, tc.args, err)
			}
			if out != tc.want {
				t.Errorf("%s\n%v: printed\n%s\nwant\n%s", tc.reason, tc.args, out, tc.want)
			}
		})
	}

	// Followed, the log is read as it grows, until the container ends.
	done := make(chan string, 1)
	go func() {
		out, err := s.kubectlLambda(ctx, time.Now(), "logs", "greeter", "-f")
		if err != nil {
			out = err.Error()
		}
		done <- out
	}()
	time.Sleep(500 * time.Millisecond)
	later := `{"level":"warn","msg":"greeting chatty","id":"2"}` + "\n"
	kubelet.Log(s.namespace, servingPod, render.ContainerFunction, later, true)
	select {
	case out := <-done:
		if out != invocation+later {
			t.Errorf("logs -f printed\n%s\nwant what was logged before and after it started:\n%s", out, invocation+later)
		}
	case <-ctx.Done():
		t.Fatal("logs -f did not end when the container's log ended")
	}
}
