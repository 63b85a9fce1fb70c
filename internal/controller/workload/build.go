package workload

import (
	"context"
	"regexp"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errListBuildPods = "cannot list the pods of the build"
	errNoDigest      = "the build reported success but no image digest: its termination message is not a sha256 digest"
)

// labelJobName is how the Job controller labels a Job's pods.
const labelJobName = "batch.kubernetes.io/job-name"

// maxBuildMessage bounds how much of Kaniko's log a status carries.
const maxBuildMessage = 1024

var digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// A buildOutcome is what a build Job says of itself.
type buildOutcome struct {
	done, failed bool
	digest       string
	message      string
}

// outcome reads a build Job's conditions and, once it has finished, its
// pods' termination messages: the digest on success (Kaniko writes it with
// --digest-file=/dev/termination-log), the end of Kaniko's log on failure.
func outcome(ctx context.Context, kube client.Client, job *batchv1.Job) (buildOutcome, error) {
	var o buildOutcome
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type { //nolint:exhaustive // Only the terminal conditions matter.
		case batchv1.JobComplete:
			o.done = true
		case batchv1.JobFailed:
			o.failed, o.message = true, strings.TrimSpace(c.Reason+": "+c.Message)
		}
	}
	if !o.done && !o.failed {
		return o, nil
	}
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{labelJobName: job.Name}); err != nil {
		return o, errors.Wrap(err, errListBuildPods)
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			t := cs.State.Terminated
			if t == nil {
				continue
			}
			msg := strings.TrimSpace(t.Message)
			switch {
			case o.done && t.ExitCode == 0 && digestPattern.MatchString(msg):
				o.digest = msg
			case o.failed && t.ExitCode != 0 && msg != "":
				o.message = tail(msg, maxBuildMessage)
			}
		}
	}
	if o.done && o.digest == "" {
		o.done, o.failed, o.message = false, true, errNoDigest
	}
	return o, nil
}

// tail keeps the end of a log, where the error is.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
