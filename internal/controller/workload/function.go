package workload

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/lifecycle"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A functionClient acts on one LambdaFunction's objects in its target
// cluster.
type functionClient struct {
	connection

	// plan is what the reconcile's Observe rendered and found, for its
	// Create or Update: both act on exactly what Observe compared.
	plan plan
}

// Observe renders the function, follows its build, and compares what is
// deployed with what render wants.
func (c *functionClient) Observe(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return c.deleting(ctx, usedBrokers(mg.Spec.ForProvider.Eventing.GetBroker(), mg.Status.AtProvider.Eventing))
	}
	at := &mg.Status.AtProvider
	was := transitionState{phase: at.Phase, reason: mg.GetCondition(xpv2.TypeReady).Reason}
	if at.Build != nil {
		was.digest = at.Build.Digest
	}
	fp := &functionPass{workloadPass: workloadPass{connection: c.connection, mg: mg, at: &at.WorkloadObservation, plan: &c.plan}, c: c, mg: mg}
	defer func() { c.transitions(mg, was, fp.cause) }()
	return lifecycle.Function(ctx, c.input(mg), at.Phase, fp)
}

// input is what render needs of the function: its spec, the provider
// config's defaults and the build it last pushed.
func (c *functionClient) input(mg *v1alpha1.LambdaFunction) render.FunctionInput {
	spec, at := mg.Spec.ForProvider, &mg.Status.AtProvider
	in := render.FunctionInput{Namespace: mg.Namespace, Name: mg.Name, Spec: spec, Defaults: c.defaults, Rebuild: mg.GetAnnotations()[v1alpha1.AnnotationRebuild]}
	if b := at.Build; b != nil && b.Digest != "" {
		in.Observed.Build = &render.Pushed{Identity: b.Identity, Digest: b.Digest}
	}
	in.Observed.Served = at.LatestReadyRevision != ""
	return in
}

// A functionPass takes an Observe's steps of a LambdaFunction's pass.
type functionPass struct {
	workloadPass
	c  *functionClient
	mg *v1alpha1.LambdaFunction
	// cause is why this Observe found the build failed, if it did.
	cause string
}

// Resolve resolves the source, counting how long it took and why it
// failed.
func (p *functionPass) Resolve(ctx context.Context, src v1alpha1.FunctionSource) (string, *observe.Verdict, error) {
	kind, start := sourceKind(src), time.Now()
	id, err := p.c.resolveSource(ctx, src)
	sourceResolveDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	if err != nil {
		sourceResolveErrors.WithLabelValues(kind, string(lifecycle.SourceReason(err))).Inc()
	}
	return id, nil, err
}

// Render renders in.
func (p *functionPass) Render(in render.FunctionInput) (*render.Objects, error) {
	return render.Function(in)
}

// Build follows the build, starting it when its Job is missing.
func (p *functionPass) Build(ctx context.Context, objs *render.Objects) (string, managed.ExternalObservation, error) {
	digest, cause, obs, err := p.c.followBuild(ctx, p.mg, objs)
	p.cause = cause
	return digest, obs, err
}

// Built renders the workload with the digest the build pushed.
func (p *functionPass) Built(objs *render.Objects, digest string) (*render.Objects, error) {
	return objs.Built(digest)
}

// Create applies what Observe rendered: a build, or the deployed objects.
func (c *functionClient) Create(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalCreation, error) {
	if err := c.applyDesired(ctx, mg); err != nil {
		return managed.ExternalCreation{}, err
	}
	c.created(mg, c.plan.desired)
	return managed.ExternalCreation{}, nil
}

// Update applies what Observe rendered.
func (c *functionClient) Update(ctx context.Context, mg *v1alpha1.LambdaFunction) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, c.applyDesired(ctx, mg)
}

// applyDesired applies what Observe rendered and says when that starts a
// build.
func (c *functionClient) applyDesired(ctx context.Context, mg *v1alpha1.LambdaFunction) error {
	if err := c.apply(ctx, c.plan); err != nil {
		return err
	}
	for _, o := range c.plan.desired {
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
	return managed.ExternalDelete{}, c.remove(ctx, usedBrokers(mg.Spec.ForProvider.Eventing.GetBroker(), mg.Status.AtProvider.Eventing))
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
