package workload

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errGetJob        = "cannot get the build Job"
	errGetNamespace  = "cannot get the namespace of the build"
	errBuildOutcome  = "cannot read the outcome of the build"
	errListBuildPods = "cannot list the pods of the build"
)

// jobOutcome reads what a build Job and its pods say of the build: the
// kubelet reports Kaniko's exit with the digest before the Job controller
// ends the Job.
func jobOutcome(ctx context.Context, kube client.Client, job *batchv1.Job) (observe.BuildOutcome, error) {
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{observe.LabelJobName: job.Name}); err != nil {
		return observe.BuildOutcome{}, errors.Wrap(err, errListBuildPods)
	}
	return observe.OutcomeOf(job, pods.Items), nil
}

// followBuild follows the build of the rendered identity, and starts it when its
// Job does not exist. Once the build has pushed its image it returns the
// digest; until then, the observation Observe reports and, for a failed
// build, which part failed.
func (c *functionClient) followBuild(ctx context.Context, mg *v1alpha1.LambdaFunction, objs *render.Objects) (digest, cause string, obs managed.ExternalObservation, err error) {
	at := &mg.Status.AtProvider
	job := &batchv1.Job{}
	err = c.kube.Get(ctx, client.ObjectKeyFromObject(objs.BuildJob), job)
	if kerrors.IsNotFound(err) {
		obs, err = c.startBuild(ctx, mg, objs)
		return "", "", obs, err
	}
	if err != nil {
		return "", "", obs, errors.Wrap(err, errGetJob)
	}
	o, err := jobOutcome(ctx, c.kube, job)
	if err != nil {
		return "", "", obs, errors.Wrap(err, errBuildOutcome)
	}
	at.Build = &v1alpha1.BuildObservation{
		Identity: objs.BuildIdentity, JobName: job.Name,
		StartedAt: job.Status.StartTime, CompletedAt: o.Completed,
		Message: o.Message, Digest: o.Digest,
	}
	v, done := observe.Built(objs.Image, job.Name, o)
	if done {
		return o.Digest, "", obs, nil
	}
	judge(mg, &at.WorkloadObservation, v)
	return "", o.Cause, upToDate, nil
}

// startBuild has Create or Update start the build of an identity never
// built, once the namespace admits its pods. The Service keeps its last
// image meanwhile.
func (c *functionClient) startBuild(ctx context.Context, mg *v1alpha1.LambdaFunction, objs *render.Objects) (managed.ExternalObservation, error) {
	at := &mg.Status.AtProvider
	if msg, err := c.buildNotAdmitted(ctx); err != nil || msg != "" {
		return held(mg, &at.WorkloadObservation, v1alpha1.ReasonBuildNotAdmitted, msg, err)
	}
	desired := append(objs.Build(), objs.Brokers()...)
	st, err := c.observe(ctx, desired)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if len(st.conflicts) > 0 {
		return nameConflict(mg, &at.WorkloadObservation, st)
	}
	c.plan = plan{desired: desired, found: st}
	at.Build = &v1alpha1.BuildObservation{Identity: objs.BuildIdentity, JobName: objs.BuildJob.Name}
	judge(mg, &at.WorkloadObservation, observe.BuildStarting(objs.BuildJob.Name))
	return managed.ExternalObservation{ResourceExists: st.exists, ResourceUpToDate: false}, nil
}

// buildNotAdmitted says why the target namespace would refuse a build pod,
// before a Job is created whose pods would be refused silently. A namespace
// the provider may not read is given the benefit of the doubt.
func (c *functionClient) buildNotAdmitted(ctx context.Context) (string, error) {
	ns := &corev1.Namespace{}
	err := c.kube.Get(ctx, types.NamespacedName{Name: c.namespace}, ns)
	switch {
	case kerrors.IsForbidden(err):
		return "", nil
	case err != nil:
		return "", errors.Wrap(err, errGetNamespace)
	}
	return observe.BuildNotAdmitted(ns.Name, ns.Labels), nil
}
