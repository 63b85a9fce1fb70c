package workload

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
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

// judge sets a resource's phase and Ready condition as a verdict says.
func judge(mg resource.Managed, at *v1alpha1.WorkloadObservation, v observe.Verdict) {
	at.Phase = v.Phase
	if v.Ready {
		mg.SetConditions(xpv2.Available().WithObservedGeneration(mg.GetGeneration()))
		return
	}
	mg.SetConditions(notReady(mg, v.Reason, v.Message))
}

// held is the observation of a resource that waits for something a user
// must fix: up to date, so nothing is applied, and not Ready, saying why.
func held(mg resource.Managed, at *v1alpha1.WorkloadObservation, reason xpv2.ConditionReason, msg string, err error) (managed.ExternalObservation, error) {
	if msg == "" {
		return upToDate, err
	}
	return holding(mg, at, observe.Held(at.Phase, reason, msg), err)
}

// holding judges a resource by v and applies nothing: up to date.
func holding(mg resource.Managed, at *v1alpha1.WorkloadObservation, v observe.Verdict, err error) (managed.ExternalObservation, error) {
	judge(mg, at, v)
	return upToDate, err
}

// upToDate is the observation of a resource to which nothing is applied.
var upToDate = managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}

// msgNotApplied ends the message of a name conflict.
const msgNotApplied = "; nothing is applied until the name is free"

// nameConflict is the observation of a resource some of whose objects' names
// are taken: nothing is applied, and it is not Ready, saying which.
func nameConflict(mg resource.Managed, at *v1alpha1.WorkloadObservation, st liveState) (managed.ExternalObservation, error) {
	return held(mg, at, v1alpha1.ReasonNameConflict, strings.Join(st.conflicts, "; ")+msgNotApplied, nil)
}
