package workload

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const (
	errRender          = "cannot render the desired objects"
	errGetJob          = "cannot get the build Job"
	errGetNamespace    = "cannot get the namespace of the build"
	errBuildOutcome    = "cannot read the outcome of the build"
	errFmtSourceSecret = "cannot read the source credentials Secret %s"
)

// A functionClient acts on one LambdaFunction's objects in its target
// cluster.
type functionClient struct {
	connection

	// desired is what the reconcile's Observe rendered, for its Create or
	// Update: both act on exactly what Observe compared. prune is false
	// while a build starts.
	desired []client.Object
	prune   bool
}

// Observe renders the function, follows its build, and compares what is
// deployed with what render wants.
func (c *functionClient) Observe(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return c.deleting(ctx)
	}
	at := &mg.Status.AtProvider
	was := transitionState{phase: at.Phase, reason: mg.GetCondition(xpv2.TypeReady).Reason}
	if at.Build != nil {
		was.digest = at.Build.Digest
	}
	// cause is why this Observe found the build failed, if it did.
	var cause string
	defer func() { c.transitions(mg, was, cause) }()
	in, err := c.input(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	objs, err := render.Function(in)
	if err != nil {
		judge(mg, &at.WorkloadObservation, observe.Held(at.Phase, v1alpha1.ReasonInvalid, err.Error()))
		return managed.ExternalObservation{}, errors.Wrap(err, errRender)
	}
	if msg, err := c.unserved(objs); err != nil || msg != "" {
		return held(mg, &at.WorkloadObservation, v1alpha1.ReasonBrokerMissing, msg, err)
	}
	if objs.BuildJob != nil {
		var digest string
		var obs managed.ExternalObservation
		if digest, cause, obs, err = c.build(ctx, mg, objs); err != nil || digest == "" {
			return obs, err
		}
		in.Observed.Build = &render.Build{Identity: objs.BuildIdentity, Digest: digest}
		if objs, err = render.Function(in); err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, errRender)
		}
	}
	c.desired, c.prune = objs.All(), true
	return c.deploy(ctx, mg, &at.WorkloadObservation, objs)
}

// input is what render needs of the function: its spec, the provider
// config's defaults, the build it last pushed and the identity of its
// source. A source that cannot be resolved holds the function, saying why.
func (c *functionClient) input(ctx context.Context, mg *v1alpha1.LambdaFunction) (render.FunctionInput, error) {
	spec, at := mg.Spec.ForProvider, &mg.Status.AtProvider
	in := render.FunctionInput{Namespace: mg.Namespace, Name: mg.Name, Spec: spec, Defaults: c.defaults, Rebuild: mg.GetAnnotations()[v1alpha1.AnnotationRebuild]}
	if b := at.Build; b != nil && b.Digest != "" {
		in.Observed.Build = &render.Build{Identity: b.Identity, Digest: b.Digest}
	}
	kind := sourceKind(spec.Source)
	if kind == "" {
		return in, nil
	}
	start := time.Now()
	id, err := c.resolveSource(ctx, spec.Source)
	sourceResolveDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	if err != nil {
		// A missing Secret, ref or object needs a user; a server that
		// does not answer may come back.
		reason := v1alpha1.ReasonSourceUnreachable
		if source.IsUnresolvable(err) || kerrors.IsNotFound(err) {
			reason = v1alpha1.ReasonSourceUnresolved
		}
		sourceResolveErrors.WithLabelValues(kind, string(reason)).Inc()
		judge(mg, &at.WorkloadObservation, observe.Held(at.Phase, reason, err.Error()))
		return in, err
	}
	in.Observed.SourceIdentity = id
	return in, nil
}

// build follows the build of the rendered identity, and starts it when its
// Job does not exist. Once the build has pushed its image it returns the
// digest; until then, the observation Observe reports and, for a failed
// build, which part failed.
func (c *functionClient) build(ctx context.Context, mg *v1alpha1.LambdaFunction, objs *render.Objects) (digest, cause string, obs managed.ExternalObservation, err error) {
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
	o, err := outcome(ctx, c.kube, job)
	if err != nil {
		return "", "", obs, errors.Wrap(err, errBuildOutcome)
	}
	at.Build = &v1alpha1.BuildObservation{
		Identity: objs.BuildIdentity, JobName: job.Name,
		StartedAt: job.Status.StartTime, CompletedAt: job.Status.CompletionTime,
		Message: o.Message, Digest: o.Digest,
	}
	v, done := observe.Built(objs.Image, job.Name, o)
	if done {
		return o.Digest, "", obs, nil
	}
	judge(mg, &at.WorkloadObservation, v)
	return "", o.Cause, managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// startBuild has Create or Update start the build of an identity never
// built, once the namespace admits its pods. The Service keeps its last
// image meanwhile.
func (c *functionClient) startBuild(ctx context.Context, mg *v1alpha1.LambdaFunction, objs *render.Objects) (managed.ExternalObservation, error) {
	at := &mg.Status.AtProvider
	if msg, err := c.buildNotAdmitted(ctx); err != nil || msg != "" {
		return held(mg, &at.WorkloadObservation, v1alpha1.ReasonBuildNotAdmitted, msg, err)
	}
	c.desired = append(objs.Build(), objs.Brokers()...)
	st, err := c.observe(ctx, c.desired)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if len(st.conflicts) > 0 {
		return nameConflict(mg, &at.WorkloadObservation, st)
	}
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

// resolveSource resolves a git or S3 source to its identity, with the
// credentials of its Secret, which lives beside the build in the target
// namespace.
func (c *functionClient) resolveSource(ctx context.Context, src v1alpha1.FunctionSource) (string, error) {
	data, err := c.secret(ctx, src.CredentialsRef())
	if err != nil {
		return "", err
	}
	return c.sources.Resolve(ctx, src, data)
}

// secret reads a source's credentials Secret in the target namespace; no
// reference means no credentials.
func (c *functionClient) secret(ctx context.Context, ref *v1alpha1.LocalObjectReference) (map[string][]byte, error) {
	if ref == nil {
		return nil, nil
	}
	s := &corev1.Secret{}
	if err := c.kube.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: string(ref.Name)}, s); err != nil {
		return nil, errors.Wrapf(err, errFmtSourceSecret, ref.Name)
	}
	return s.Data, nil
}

// Create applies what Observe rendered: a build, or the deployed objects.
func (c *functionClient) Create(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, c.applyDesired(ctx, mg)
}

// Update applies what Observe rendered.
func (c *functionClient) Update(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, c.applyDesired(ctx, mg)
}

// applyDesired applies what Observe rendered and says when that starts a
// build.
func (c *functionClient) applyDesired(ctx context.Context, mg *v1alpha1.LambdaFunction) error {
	if err := c.apply(ctx, c.desired, c.prune); err != nil {
		return err
	}
	for _, o := range c.desired {
		if j, ok := o.(*batchv1.Job); ok {
			buildsStarted.WithLabelValues(runtimeOf(mg)).Inc()
			c.record.Event(mg, event.Normal(reasonBuildStarted, "started build "+j.Name))
		}
	}
	return nil
}

// A transitionState is what a function's status said before an Observe.
type transitionState struct {
	phase  v1alpha1.Phase
	reason xpv2.ConditionReason
	digest string
}

// transitions records events and metrics for what an Observe changed.
// They follow the status, so a restarted provider does not count twice. A
// build failed when the resource newly says so; a Revision that fails
// after a build is not a failed build.
func (c *functionClient) transitions(mg *v1alpha1.LambdaFunction, was transitionState, cause string) {
	at := mg.Status.AtProvider
	b := at.Build
	if b != nil && b.Digest != "" && b.Digest != was.digest {
		recordBuild(outcomeSucceeded, runtimeOf(mg), "", took(b))
		c.record.Event(mg, event.Normal(reasonBuildSucceeded, fmt.Sprintf("build %s pushed %s", b.JobName, b.Digest)))
	}
	if cause != "" && was.reason != v1alpha1.ReasonBuildFailed && b != nil {
		recordBuild(outcomeFailed, runtimeOf(mg), cause, took(b))
		c.record.Event(mg, event.Warning(reasonBuildFailed, errors.Errorf(observe.MsgFmtBuildFailed, b.JobName, b.Message)))
	}
	readyTransition(c.record, mg, was.phase, at.Phase, at.URL)
}

// took is how long a finished build ran.
func took(b *v1alpha1.BuildObservation) time.Duration {
	if b.StartedAt == nil || b.CompletedAt == nil {
		return 0
	}
	return b.CompletedAt.Sub(b.StartedAt.Time)
}

// Delete removes every object of the function, and the Broker it created
// once no one else uses it.
func (c *functionClient) Delete(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, c.remove(ctx, render.CreatedBroker(c.namespace, mg.Spec.ForProvider.Eventing.GetBroker()))
}

// Disconnect does nothing: target clients are cached, not per reconcile.
func (c *functionClient) Disconnect(context.Context) error { return nil }

// runtimeOf is the language a function builds with, the runtime label.
func runtimeOf(mg *v1alpha1.LambdaFunction) string {
	if rt := mg.Spec.ForProvider.Runtime; rt != nil && rt.Language != nil {
		return string(*rt.Language)
	}
	return ""
}

// sourceKind is the source label of a source the provider resolves, or ""
// for one it does not.
func sourceKind(src v1alpha1.FunctionSource) string {
	switch {
	case src.Git != nil:
		return sourceGit
	case src.S3 != nil:
		return sourceS3
	}
	return ""
}
