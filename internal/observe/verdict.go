package observe

import (
	"fmt"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// What a verdict says, in the provider's conditions and the function's alike.
const (
	msgFmtStarting        = "starting build %s"
	msgFmtBuilding        = "building %s in Job %s"
	msgFmtApplying        = "applying: %s"
	msgFmtServiceNotReady = "waiting for the Knative Service to be Ready: %s"
	msgServing            = "serving at "

	// MsgFmtBuildFailed says which build failed and why; the provider's
	// event says it too.
	MsgFmtBuildFailed = "build %s failed: %s"
)

// A Verdict is where a workload stands after one look at it: its phase,
// whether it is Ready, and the reason and message that say why. The
// provider's Ready condition and phase, and the function's, come from it
// alone.
type Verdict struct {
	Phase v1alpha1.Phase

	// Ready says the workload serves as specified, or a Revision serves
	// while the latest fails (then the reason says so).
	Ready bool

	Reason  xpv2.ConditionReason
	Message string
}

// NeedsUser says nothing changes until a user does something.
func (v Verdict) NeedsUser() bool {
	return v1alpha1.NeedsUser(v.Reason)
}

// Settled says nothing is left to do: the workload serves as specified.
func (v Verdict) Settled() bool {
	return v.Ready && v.Reason == xpv2.ReasonAvailable
}

// Held is the verdict on a workload held before anything is applied: what
// runs keeps running, so its phase stays what it was (Pending for one never
// deployed), and the reason says what it waits for.
func Held(was v1alpha1.Phase, reason xpv2.ConditionReason, msg string) Verdict {
	if was == "" {
		was = v1alpha1.PhasePending
	}
	return Verdict{Phase: was, Reason: reason, Message: msg}
}

// Retrying is the verdict on a workload whose look was cut short by what
// may pass, such as a server that does not answer: nothing changes, so a
// workload that served still does, and stays Ready.
func Retrying(was v1alpha1.Phase, reason xpv2.ConditionReason, msg string) Verdict {
	v := Held(was, reason, msg)
	v.Ready = v.Phase == v1alpha1.PhaseReady
	return v
}

// BuildStarting is the verdict on a workload whose build Job is yet to be
// created.
func BuildStarting(job string) Verdict {
	return Verdict{Phase: v1alpha1.PhasePending, Reason: v1alpha1.ReasonBuilding, Message: fmt.Sprintf(msgFmtStarting, job)}
}

// Built is the verdict on a workload whose build of image in Job job says
// o; done once the build has pushed the image and the workload can be
// deployed. A failed build is not retried: nothing deployed changes until
// the code, runtime or build settings do.
func Built(image, job string, o BuildOutcome) (v Verdict, done bool) {
	switch {
	case o.Failed:
		return Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonBuildFailed, Message: fmt.Sprintf(MsgFmtBuildFailed, job, o.Message)}, false
	case !o.Done:
		msg := fmt.Sprintf(msgFmtBuilding, image, job)
		if o.Waiting != "" {
			msg += ": " + o.Waiting
		}
		return Verdict{Phase: v1alpha1.PhaseBuilding, Reason: v1alpha1.ReasonBuilding, Message: msg}, false
	}
	return Verdict{}, true
}

// Serving is the verdict on a workload that serves at url.
func Serving(url string) Verdict {
	return Verdict{Phase: v1alpha1.PhaseReady, Ready: true, Reason: xpv2.ReasonAvailable, Message: msgServing + url}
}

// ServingWhileFailing is the verdict on a workload whose latest Revision
// fails while the one before still serves: Ready, and waiting for a user to
// fix the spec.
func ServingWhileFailing(failure string) Verdict {
	return Verdict{Phase: v1alpha1.PhaseReady, Ready: true, Reason: v1alpha1.ReasonRevisionFailed, Message: failure}
}

// A Deployment is what a workload's deployed objects say of it.
type Deployment struct {
	// Unapplied says, one line each, what the live objects lack of the
	// rendered ones. The function leaves applying to Crossplane and has
	// none.
	Unapplied []string

	// Refused and Pending are what render refused and what it waits for.
	Refused, Pending []string

	Service  ServiceState
	Eventing EventingState
}

// Deployed is the verdict on a workload whose objects are applied, or
// composed, as d says.
func Deployed(d Deployment) Verdict {
	svc, ev := d.Service, d.Eventing
	switch {
	case len(d.Unapplied) > 0:
		return Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonDeploying, Message: fmt.Sprintf(msgFmtApplying, strings.Join(d.Unapplied, "; "))}
	case len(d.Refused) > 0:
		return Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonForwardRefused, Message: strings.Join(d.Refused, "; ")}
	case len(d.Pending) > 0:
		return Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonWaiting, Message: strings.Join(d.Pending, "; ")}
	case svc.Failed && svc.Serving:
		return ServingWhileFailing(svc.Failure())
	case svc.Failed:
		return Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonRevisionFailed, Message: svc.Failure()}
	case svc.RouteFailed:
		return Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonRouteFailed, Message: svc.Message}
	case !svc.Ready:
		return Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonDeploying, Message: fmt.Sprintf(msgFmtServiceNotReady, svc.Message)}
	case ev.Failed:
		return Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonEventingFailed, Message: ev.Message}
	case !ev.Ready:
		return Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonDeploying, Message: MsgWaitEventing + ev.Message}
	}
	return Serving(svc.URL)
}
