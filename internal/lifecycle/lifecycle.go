// Package lifecycle orders the steps of a pass over one LambdaFunction or
// LambdaAgent, which the provider's external client and the composition
// function both take: for a function, resolve the source, render, admit,
// build, render the built workload, deploy; for an agent, render, admit,
// deploy. How each step reaches the cluster, and what a pass ends
// with, are the caller's (Steps); the order, and which verdict each early
// end gives, are written here once.
package lifecycle

import (
	"context"

	kerrors "k8s.io/apimachinery/pkg/api/errors"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const errRender = "cannot render the desired objects"

// Workload are the steps every workload's pass ends with; R is what a
// pass ends with, such as the provider's observation or the function's
// verdict.
type Workload[R any] interface {
	// Admit says whether the objects may be built and deployed; a
	// non-nil stop ends the pass held.
	Admit(ctx context.Context, objs *render.Objects) (stop *observe.Verdict, err error)
	// Deploy deploys objs and judges them.
	Deploy(ctx context.Context, objs *render.Objects) (R, error)
	// Hold ends a pass that stops before anything is built or deployed,
	// with the verdict and, when one caused it, the error: whatever runs
	// keeps running as it is.
	Hold(v observe.Verdict, cause error) (R, error)
}

// Steps are how one caller takes each step of a pass over a function.
type Steps[R any] interface {
	Workload[R]
	// Resolve is the identity of the function's git or S3 source. A
	// non-nil stop ends the pass held, as when the credentials Secret is
	// yet to be read.
	Resolve(ctx context.Context, src v1alpha1.FunctionSource) (id string, stop *observe.Verdict, err error)
	// Render is the function's objects.
	Render(in render.FunctionInput) (*render.Objects, error)
	// Build follows the build objs render, and returns the digest it
	// pushed once it has succeeded; until then, what the pass ends with.
	Build(ctx context.Context, objs *render.Objects) (digest string, r R, err error)
	// Built is objs with the workload running the digest a build pushed.
	Built(objs *render.Objects, digest string) (*render.Objects, error)
}

// AgentSteps are how one caller takes each step of a pass over an agent.
type AgentSteps[R any] interface {
	Workload[R]
	// Render is the agent's objects.
	Render(in render.AgentInput) (*render.Objects, error)
}

// Function takes a pass over a function whose phase was was, with the
// render input in, through s.
func Function[R any](ctx context.Context, in render.FunctionInput, was v1alpha1.Phase, s Steps[R]) (R, error) {
	if in.Spec.Source.Git != nil || in.Spec.Source.S3 != nil {
		id, stop, err := s.Resolve(ctx, in.Spec.Source)
		if err != nil {
			return s.Hold(SourceFailure(was, err), err)
		}
		if stop != nil {
			return s.Hold(*stop, nil)
		}
		in.Observed.SourceIdentity = id
	}
	objs, err := s.Render(in)
	if err != nil {
		return invalid(was, err, s)
	}
	if r, held, err := admit(ctx, objs, s); held || err != nil {
		return r, err
	}
	if objs.BuildJob != nil {
		digest, r, err := s.Build(ctx, objs)
		if err != nil || digest == "" {
			return r, err
		}
		if objs, err = s.Built(objs, digest); err != nil {
			var none R
			return none, errors.Wrap(err, errRender)
		}
	}
	return s.Deploy(ctx, objs)
}

// Agent takes a pass over an agent whose phase was was, with the render
// input in, through s.
func Agent[R any](ctx context.Context, in render.AgentInput, was v1alpha1.Phase, s AgentSteps[R]) (R, error) {
	objs, err := s.Render(in)
	if err != nil {
		return invalid(was, err, s)
	}
	if r, held, err := admit(ctx, objs, s); held || err != nil {
		return r, err
	}
	return s.Deploy(ctx, objs)
}

// invalid holds a workload whose spec render refuses.
func invalid[R any](was v1alpha1.Phase, err error, s Workload[R]) (R, error) {
	return s.Hold(observe.Held(was, v1alpha1.ReasonInvalid, err.Error()), errors.Wrap(err, errRender))
}

// admit asks s to admit objs; held is true when it does not.
func admit[R any](ctx context.Context, objs *render.Objects, s Workload[R]) (r R, held bool, err error) {
	stop, err := s.Admit(ctx, objs)
	switch {
	case err != nil:
		return r, true, err
	case stop != nil:
		r, err = s.Hold(*stop, nil)
		return r, true, err
	}
	return r, false, nil
}

// SourceReason is why a source could not be resolved: a missing Secret,
// ref or object needs a user (SourceUnresolved); a server that does not
// answer may come back (SourceUnreachable).
func SourceReason(err error) xpv2.ConditionReason {
	if source.IsUnresolvable(err) || kerrors.IsNotFound(err) {
		return v1alpha1.ReasonSourceUnresolved
	}
	return v1alpha1.ReasonSourceUnreachable
}

// SourceFailure is the verdict on a function whose phase was was and whose
// source could not be resolved: held until a user fixes it, or retried,
// serving on meanwhile, when the server may come back.
func SourceFailure(was v1alpha1.Phase, err error) observe.Verdict {
	if r := SourceReason(err); r == v1alpha1.ReasonSourceUnresolved {
		return observe.Held(was, r, err.Error())
	}
	return observe.Retrying(was, v1alpha1.ReasonSourceUnreachable, err.Error())
}
