package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errListPodsFmt = "cannot list the pods of %s"
	errStreamFmt   = "cannot read the log of %s"
	errNoBuild     = "it has no build: its source is an image, or it has not started one"
	errNoPodsFmt   = "%s has no pods now: %s"
	noWorkloadPods = "Knative scales a workload without traffic to zero; invoke it to start one"
	noBuildPods    = "the build has not started a pod yet, or its pods were removed"
)

// logsOptions are which logs logs reads.
type logsOptions struct {
	// build reads the current build's fetch and Kaniko containers instead
	// of the workload's.
	build  bool
	follow bool
}

// A logStream is one container's log in one pod.
type logStream struct {
	pod, container string
}

// logs writes the logs of a workload's pods, or of its current build's:
// each line prefixed with its pod and container when there is more than
// one. Following, the streams are read at once; otherwise one after another.
func logs(ctx context.Context, kube kubernetes.Interface, w *workload, o logsOptions, out io.Writer) error {
	streams, err := logStreams(ctx, kube, w, o)
	if err != nil {
		return err
	}
	prefix := len(streams) > 1
	var mu sync.Mutex
	read := func(s logStream) error {
		r, err := kube.CoreV1().Pods(w.Namespace()).GetLogs(s.pod, &corev1.PodLogOptions{Container: s.container, Follow: o.follow}).Stream(ctx)
		if err != nil {
			return errors.Wrapf(err, errStreamFmt, s.pod+"/"+s.container)
		}
		defer r.Close() //nolint:errcheck // Read to its end.
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			if prefix {
				fmt.Fprintf(out, "[%s/%s] ", s.pod, s.container)
			}
			fmt.Fprintln(out, printable(sc.Text()))
			mu.Unlock()
		}
		return errors.Wrapf(sc.Err(), errStreamFmt, s.pod+"/"+s.container)
	}
	if !o.follow {
		for _, s := range streams {
			if err := read(s); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make(chan error, len(streams))
	for _, s := range streams {
		go func() { errs <- read(s) }()
	}
	var first error
	for range streams {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// logStreams lists the containers whose logs logs reads: the workload
// container of each of the workload's pods, or the fetch and Kaniko
// containers of its current build's pods.
func logStreams(ctx context.Context, kube kubernetes.Interface, w *workload, o logsOptions) ([]logStream, error) {
	selector := servingv1.ServiceLabelKey + "=" + w.Name()
	containers := []string{w.kind.container}
	why := noWorkloadPods
	if o.build {
		b := w.status.Build
		if b == nil || b.JobName == "" {
			return nil, errors.New(errNoBuild)
		}
		selector = batchv1.JobNameLabel + "=" + b.JobName
		containers = []string{render.ContainerFetch, render.ContainerKaniko}
		why = noBuildPods
	}
	pods, err := kube.CoreV1().Pods(w.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, errors.Wrapf(err, errListPodsFmt, w)
	}
	var streams []logStream
	for _, p := range pods.Items {
		for _, c := range containers {
			if hasContainer(p.Spec, c) {
				streams = append(streams, logStream{pod: p.Name, container: c})
			}
		}
	}
	if len(streams) == 0 {
		return nil, errors.Errorf(errNoPodsFmt, w, why)
	}
	return streams, nil
}

// hasContainer says whether a pod runs a container, init containers
// included.
func hasContainer(spec corev1.PodSpec, name string) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}
