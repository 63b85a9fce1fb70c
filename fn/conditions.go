package main

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// The condition types kstatus, and so Flux, read to tell progress from
// failure; Crossplane's Ready and Synced alone cannot.
const (
	typeReconciling = "Reconciling"
	typeStalled     = "Stalled"
)

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

// progressOf is how a composite resource moves on from a verdict.
func progressOf(v observe.Verdict) progress {
	switch {
	case v.NeedsUser():
		return stuck
	case v.Settled():
		return done
	}
	return working
}

// conditions sets Reconciling and Stalled on the composite resource and its
// claim, both every pass, so neither is ever left stale. A stalled verdict
// is also a warning event.
func conditions(rsp *fnv1.RunFunctionResponse, v observe.Verdict) {
	reason := string(v.Reason)
	t, f := fnv1.Status_STATUS_CONDITION_TRUE, fnv1.Status_STATUS_CONDITION_FALSE
	switch progressOf(v) {
	case done:
		setCondition(rsp, typeReconciling, f, reason).Message = &v.Message
		setCondition(rsp, typeStalled, f, reason)
	case stuck:
		setCondition(rsp, typeReconciling, f, reason)
		setCondition(rsp, typeStalled, t, reason).Message = &v.Message
		warn(rsp, reason, v.Message)
	case working:
		setCondition(rsp, typeReconciling, t, reason).Message = &v.Message
		setCondition(rsp, typeStalled, f, reason)
	}
}

// readiness is whether an observed composed resource is ready: a Job once
// complete, a ConfigMap, NetworkPolicy or RabbitmqBrokerConfig (which have no
// status) as soon as it exists, anything else (Knative objects, managed
// resources) once its Ready condition is True.
func readiness(o codec.Object) fnv1.Ready {
	want := "Ready"
	switch string(codec.TextAt(o, "kind")) {
	case "ConfigMap", "NetworkPolicy", render.RabbitMQBrokerConfigKind:
		return fnv1.Ready_READY_TRUE
	case "Job":
		want = string(batchv1.JobComplete)
	}
	if c := condition(o, want); string(codec.TextAt(c, "status")) == string(corev1.ConditionTrue) {
		return fnv1.Ready_READY_TRUE
	}
	return fnv1.Ready_READY_FALSE
}

// condition is an observed object's condition of a type; nil when it has
// none.
func condition(o codec.Object, typ string) codec.Object {
	var found codec.Object
	conditions, _ := codec.StructAt(o, "status").Get("conditions")
	conditions.List(func(c codec.Value) bool {
		if m := c.Object(); string(codec.TextAt(m, "type")) == typ {
			found = m
			return false
		}
		return true
	})
	return found
}
