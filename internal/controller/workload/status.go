package workload

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// Reasons of the events a resource gets.
const (
	reasonBuildStarted   event.Reason = "BuildStarted"
	reasonBuildSucceeded event.Reason = "BuildSucceeded"
	reasonBuildFailed    event.Reason = "BuildFailed"
	reasonReady          event.Reason = "ServiceReady"
	reasonRevisionFailed event.Reason = "RevisionFailed"
)

// readyTransition records the event and the time to Ready of a resource
// that has just become Ready.
func readyTransition(record event.Recorder, mg resource.Managed, was, now v1alpha1.Phase, url string) {
	if now != v1alpha1.PhaseReady || was == v1alpha1.PhaseReady {
		return
	}
	record.Event(mg, event.Normal(reasonReady, "serving at "+url))
	if was == "" || was == v1alpha1.PhasePending || was == v1alpha1.PhaseBuilding || was == v1alpha1.PhaseDeploying {
		timeToReady.WithLabelValues(mg.GetObjectKind().GroupVersionKind().Kind).Observe(time.Since(mg.GetCreationTimestamp().Time).Seconds())
	}
}

// ConnectionDetailURL is the connection detail that carries the URL.
const ConnectionDetailURL = "url"

// notReady is a Ready=False condition saying why.
func notReady(mg resource.Managed, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return condition(mg, xpv2.TypeReady, corev1.ConditionFalse, reason, msg)
}

// condition is a condition of the resource's current generation.
func condition(mg resource.Managed, t xpv2.ConditionType, status corev1.ConditionStatus, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{
		Type: t, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.Now(), ObservedGeneration: mg.GetGeneration(),
	}
}

// deployed compares a resource's deployed objects with the desired ones and
// reports, in its status and conditions, how far Knative has got.
func (c connection) deployed(mg resource.Managed, at *v1alpha1.WorkloadObservation, objs *render.Objects, st liveState) managed.ExternalObservation {
	at.Image = objs.Image
	at.Eventing = observe.Eventing(objs)
	svc := observe.ServiceState{Message: "the Knative Service does not exist yet"}
	if l, ok := st.objects["Service/"+c.name]; ok {
		svc = observe.Service(l.obj.(*servingv1.Service), st.failedRevision) //nolint:forcetypeassert // Listed as a Service.
	}
	at.URL, at.LatestReadyRevision, at.Traffic = svc.URL, svc.LatestReadyRevision, svc.Traffic
	failed := c.revisionFailure(mg, at, svc)
	ev := observe.EventingReadiness(objs.Eventing(), func(o client.Object) client.Object { return st.live[key(o)] })
	switch {
	case !st.upToDate:
		at.Phase = v1alpha1.PhaseDeploying
		mg.SetConditions(notReady(mg, v1alpha1.ReasonDeploying, "applying: "+strings.Join(st.differences, "; ")))
	case len(objs.Refused) > 0:
		at.Phase = v1alpha1.PhaseFailed
		mg.SetConditions(notReady(mg, v1alpha1.ReasonForwardRefused, strings.Join(objs.Refused, "; ")))
	case len(objs.Pending) > 0:
		at.Phase = v1alpha1.PhaseDeploying
		mg.SetConditions(notReady(mg, v1alpha1.ReasonWaiting, strings.Join(objs.Pending, "; ")))
	case svc.Failed && svc.Serving:
		// The Revision before still serves: Ready stays with it, and
		// LatestRevisionReady names the one that fails.
		at.Phase = v1alpha1.PhaseReady
		mg.SetConditions(xpv2.Available().WithObservedGeneration(mg.GetGeneration()))
	case svc.Failed:
		at.Phase = v1alpha1.PhaseFailed
		mg.SetConditions(notReady(mg, v1alpha1.ReasonRevisionFailed, failed))
	case svc.RouteFailed:
		at.Phase = v1alpha1.PhaseFailed
		mg.SetConditions(notReady(mg, v1alpha1.ReasonRouteFailed, svc.Message))
	case !svc.Ready:
		at.Phase = v1alpha1.PhaseDeploying
		mg.SetConditions(notReady(mg, v1alpha1.ReasonDeploying, "waiting for the Knative Service to be Ready: "+svc.Message))
	case ev.Failed:
		at.Phase = v1alpha1.PhaseFailed
		mg.SetConditions(notReady(mg, v1alpha1.ReasonEventingFailed, ev.Message))
	case !ev.Ready:
		at.Phase = v1alpha1.PhaseDeploying
		mg.SetConditions(notReady(mg, v1alpha1.ReasonDeploying, observe.MsgWaitEventing+ev.Message))
	default:
		at.Phase = v1alpha1.PhaseReady
		mg.SetConditions(xpv2.Available().WithObservedGeneration(mg.GetGeneration()))
	}
	// Only a resource that once had a failing Revision carries the
	// condition; GetCondition of one never set has no reason.
	if !svc.Failed && svc.Ready && mg.GetCondition(v1alpha1.TypeLatestRevisionReady).Reason != "" {
		mg.SetConditions(condition(mg, v1alpha1.TypeLatestRevisionReady, corev1.ConditionTrue, v1alpha1.ReasonRevisionReady, "Revision "+svc.LatestReadyRevision+" serves"))
	}
	obs := managed.ExternalObservation{ResourceExists: st.exists, ResourceUpToDate: st.upToDate, Diff: strings.Join(st.differences, "\n")}
	if at.URL != "" {
		obs.ConnectionDetails = managed.ConnectionDetails{ConnectionDetailURL: []byte(at.URL)}
	}
	return obs
}

// revisionFailure records a failing latest Revision in the status, the
// LatestRevisionReady condition and, when it is new, a warning event, and
// returns what to say of it. It clears the record once no Revision fails.
func (c connection) revisionFailure(mg resource.Managed, at *v1alpha1.WorkloadObservation, svc observe.ServiceState) string {
	was := at.FailedRevision
	at.FailedRevision = ""
	if !svc.Failed {
		return ""
	}
	at.FailedRevision = svc.LatestCreatedRevision
	msg := svc.Failure()
	mg.SetConditions(condition(mg, v1alpha1.TypeLatestRevisionReady, corev1.ConditionFalse, v1alpha1.ReasonRevisionFailed, msg))
	if was != at.FailedRevision {
		c.record.Event(mg, event.Warning(reasonRevisionFailed, errors.New(msg)))
	}
	return msg
}
