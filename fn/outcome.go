package main

import (
	"google.golang.org/protobuf/types/known/structpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// The condition types kstatus, and so Flux, read to tell progress from
// failure; Crossplane's Ready and Synced alone cannot.
const (
	typeReconciling = "Reconciling"
	typeStalled     = "Stalled"
)

// reasonAvailable is why a Ready workload is neither reconciling nor
// stalled.
const reasonAvailable = "Available"

// A progress is how a composite resource moves on from a pass.
type progress int

const (
	// working needs only time: a build, Knative, a retry.
	working progress = iota
	// done serves and needs nothing.
	done
	// stuck needs a user: nothing changes until the spec or the source does.
	stuck
)

// An outcome is where a composite resource stands after a pass.
type outcome struct {
	phase    v1alpha1.Phase
	reason   xpv2.ConditionReason
	message  string
	progress progress
}

// progressing is an outcome that needs only time.
func progressing(phase v1alpha1.Phase, reason xpv2.ConditionReason, msg string) outcome {
	return outcome{phase: phase, reason: reason, message: msg, progress: working}
}

// retrying is an outcome that needs only time and changes nothing: the
// phase stays what it was, so a workload that serves stays Ready.
func retrying(was v1alpha1.Phase, reason xpv2.ConditionReason, msg string) outcome {
	if was == "" {
		was = v1alpha1.PhasePending
	}
	return progressing(was, reason, msg)
}

// stalled is an outcome that needs a user: a failed build, a source that
// cannot be resolved, a spec that cannot be rendered.
func stalled(reason xpv2.ConditionReason, msg string) outcome {
	return outcome{phase: v1alpha1.PhaseFailed, reason: reason, message: msg, progress: stuck}
}

// failingWhileServing is the outcome of a workload whose latest Revision
// fails while the one before still serves: Ready, and stalled until a user
// fixes the spec.
func failingWhileServing(msg string) outcome {
	return outcome{phase: v1alpha1.PhaseReady, reason: v1alpha1.ReasonRevisionFailed, message: msg, progress: stuck}
}

// ready is the outcome of a workload that serves.
func ready(url string) outcome {
	return outcome{phase: v1alpha1.PhaseReady, reason: reasonAvailable, message: "serving at " + url, progress: done}
}

// conditions sets Reconciling and Stalled on the composite resource and its
// claim, both every pass, so neither is ever left stale. A stalled outcome
// is also a warning event.
func (o outcome) conditions(rsp *fnv1.RunFunctionResponse) {
	reason := string(o.reason)
	switch o.progress {
	case done:
		response.ConditionFalse(rsp, typeReconciling, reason).WithMessage(o.message).TargetCompositeAndClaim()
		response.ConditionFalse(rsp, typeStalled, reason).TargetCompositeAndClaim()
	case stuck:
		response.ConditionFalse(rsp, typeReconciling, reason).TargetCompositeAndClaim()
		response.ConditionTrue(rsp, typeStalled, reason).WithMessage(o.message).TargetCompositeAndClaim()
		response.Warning(rsp, errors.New(o.message)).WithReason(reason).TargetCompositeAndClaim()
	default:
		response.ConditionTrue(rsp, typeReconciling, reason).WithMessage(o.message).TargetCompositeAndClaim()
		response.ConditionFalse(rsp, typeStalled, reason).TargetCompositeAndClaim()
	}
}

// readiness is whether an observed composed resource is ready: a Job once
// complete, a ConfigMap, NetworkPolicy or RabbitmqBrokerConfig (which have no
// status) as soon as it exists, anything else (Knative objects, managed
// resources) once its Ready condition is True.
func readiness(s *structpb.Struct) fnv1.Ready {
	want := "Ready"
	switch stringAt(s, "kind") {
	case "ConfigMap", "NetworkPolicy", render.RabbitMQBrokerConfigKind:
		return fnv1.Ready_READY_TRUE
	case "Job":
		want = string(batchv1.JobComplete)
	}
	if c := condition(s, want); stringAt(c, "status") == string(corev1.ConditionTrue) {
		return fnv1.Ready_READY_TRUE
	}
	return fnv1.Ready_READY_FALSE
}

// condition is an observed object's condition of a type; nil when it has
// none.
func condition(s *structpb.Struct, typ string) *structpb.Struct {
	for _, c := range structAt(s, "status").GetFields()["conditions"].GetListValue().GetValues() {
		if m := c.GetStructValue(); stringAt(m, "type") == typ {
			return m
		}
	}
	return nil
}
