package main

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// The answer's results and conditions are written here rather than with
// function-sdk-go's response package: it links crossplane-runtime's resource
// package, and through it controller-runtime's client and client-go, about
// 10 MiB of the function's memory for the few messages a pass writes.

// answerTo starts the answer to req: its desired state and context carried
// forward, and how long Crossplane may reuse the answer.
func answerTo(req *fnv1.RunFunctionRequest, ttl time.Duration) *fnv1.RunFunctionResponse {
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(ttl)},
		Desired: req.GetDesired(),
		Context: req.GetContext(),
	}
}

// fatal fails the pass with err: Crossplane applies none of its desired
// state.
func fatal(rsp *fnv1.RunFunctionResponse, err error) {
	rsp.Results = append(rsp.Results, &fnv1.Result{Severity: fnv1.Severity_SEVERITY_FATAL, Message: err.Error(), Target: fnv1.Target_TARGET_COMPOSITE.Enum()})
}

// warn records a warning event with a reason on the composite resource and
// its claim.
func warn(rsp *fnv1.RunFunctionResponse, reason, message string) {
	rsp.Results = append(rsp.Results, &fnv1.Result{Severity: fnv1.Severity_SEVERITY_WARNING, Message: message, Reason: &reason, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()})
}

// setCondition sets a condition of the composite resource and its claim.
func setCondition(rsp *fnv1.RunFunctionResponse, typ string, s fnv1.Status, reason string) *fnv1.Condition {
	c := &fnv1.Condition{Type: typ, Status: s, Reason: reason, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
	rsp.Conditions = append(rsp.Conditions, c)
	return c
}
