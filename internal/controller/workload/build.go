package workload

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

const errListBuildPods = "cannot list the pods of the build"

// outcome reads what a build Job says of itself, with its pods once it has
// finished: they carry the digest or the failure.
func outcome(ctx context.Context, kube client.Client, job *batchv1.Job) (observe.BuildOutcome, error) {
	if !observe.Finished(job) {
		return observe.Build(job, nil), nil
	}
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{observe.LabelJobName: job.Name}); err != nil {
		return observe.BuildOutcome{}, errors.Wrap(err, errListBuildPods)
	}
	return observe.Build(job, pods.Items), nil
}
