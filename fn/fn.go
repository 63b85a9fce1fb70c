package main

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// responseTTL is how long Crossplane may reuse a response. A minute bounds
// how late a pushed git ref or a new S3 object is noticed.
const responseTTL = time.Minute

// workingTTL is responseTTL while a composite is still working: Crossplane
// calls again this soon, since a pass may wait on what it does not watch (a
// Revision's pods, a build's pods) or on events its circuit breaker drops.
// On the real node, with the minute, a crash loop showed 2m31s after the
// change and new code served after 58 s.
const workingTTL = 5 * time.Second

const (
	errInput     = "cannot read the function's Input"
	errResponse  = "cannot write the desired state to the response"
	errFmtMode   = "unknown mode %q: want Direct or Managed"
	errFmtNoKind = "composite resources of kind %s are not served by this function: want Lambda, XLambda, Agent or XAgent"
)

// A SourceResolver resolves a git or S3 source to its identity with the
// data of its credentials Secret.
type SourceResolver interface {
	Resolve(ctx context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error)
}

// A SourceResolverFn is a function that satisfies SourceResolver.
type SourceResolverFn func(ctx context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error)

// Resolve calls the function.
func (fn SourceResolverFn) Resolve(ctx context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error) {
	return fn(ctx, src, secret)
}

// A Function realises Lambda and Agent composite resources.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log     logging.Logger
	sources SourceResolver
	// buildDeny are networks build pods may not reach, besides what render
	// always refuses.
	buildDeny []string
}

// RunFunction composes the objects of one composite resource and reports,
// in its status and its Reconciling and Stalled conditions, how far they
// have got. Every failure is a result and a condition, never a crash, and
// nothing already composed is dropped because of one. Resources arrive with
// their Structs still in the encoding gRPC received (codec.NewCodec), and
// the composed resources it renders carry theirs in the encoding gRPC sends
// (codec.Parser): both are read as protobuf reads them, after a
// trip through the wire format.
func (f *Function) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := answerTo(req, responseTTL)

	in := &v1beta1.Input{}
	input, err := codec.ObjectOf(req.GetInput())
	if err == nil {
		err = codec.DecodeStrict(input, in)
	}
	if err != nil {
		fatal(rsp, errors.Wrap(err, errInput))
		return rsp, nil
	}
	start, mode := time.Now(), modeOf(in)
	// A pass is fatal until it returns what to apply.
	kind, result, reason := "", passFatal, ""
	defer func() { recordPass(kind, mode, result, reason, time.Since(start)) }()
	p, err := newPass(req, rsp, codec.LeaseOf(ctx))
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	kind = p.xr.kind
	f.log.Debug("Running", "xr", p.xr.name, "namespace", p.xr.namespace, "kind", p.xr.kind, "mode", in.Mode)

	var v observe.Verdict
	refused := p.xr.systemNamespace(in.AllowedSystemNamespaces)
	switch {
	case refused != nil:
		v = p.held(v1alpha1.ReasonInvalid, refused.Error())
	case mode == v1beta1.ModeManaged:
		v, err = p.managed(in)
	case mode != v1beta1.ModeDirect:
		v = p.held(v1alpha1.ReasonInvalid, errors.Errorf(errFmtMode, in.Mode).Error())
	case p.xr.agent:
		v, err = p.directAgent(ctx, in)
	default:
		v, err = p.directFunction(ctx, in, f.sources, f.buildDeny)
	}
	if err != nil {
		// Nothing of this pass is applied, so nothing running changes.
		fatal(rsp, err)
		return rsp, nil
	}
	if err := p.finish(v); err != nil {
		fatal(rsp, errors.Wrap(err, errResponse))
		return rsp, nil
	}
	if progressOf(v) == working {
		rsp.Meta.Ttl = durationpb.New(workingTTL)
	}
	result, reason = passOutcome(v), string(v.Reason)
	return rsp, nil
}

// modeOf is the Input's mode; Direct when unset, as the Input CRD defaults it.
func modeOf(in *v1beta1.Input) v1beta1.Mode {
	if in.Mode == "" {
		return v1beta1.ModeDirect
	}
	return in.Mode
}
