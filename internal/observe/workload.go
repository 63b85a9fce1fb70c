package observe

import (
	"fmt"

	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// A ServiceState is what Knative reports of a Service and of its latest
// Revision.
type ServiceState struct {
	URL                   string
	LatestReadyRevision   string
	LatestCreatedRevision string

	// Ready says the latest Revision serves at URL.
	Ready bool

	// Serving says some Revision serves at URL: the latest, or while the
	// latest fails, the one that was ready before it.
	Serving bool

	// Failed says the latest Revision cannot serve, as Knative reports it;
	// a new spec is needed, waiting will not help.
	Failed bool

	// RouteFailed says Knative cannot route requests as the spec says, such
	// as to a pinned Revision that does not exist; whatever routes served
	// before still do. A new spec is needed.
	RouteFailed bool

	// Message says why the Service is not Ready, in Knative's words.
	Message string

	// Traffic is how Knative routes requests between Revisions.
	Traffic []v1alpha1.TrafficObservation
}

// msgNoService says a workload's Knative Service is not there.
const msgNoService = "the Knative Service does not exist yet"

// Service reads a Knative Service, nil when it does not exist, and, when the
// caller has it, its latest created Revision, whose Ready condition carries
// the kubelet's reason (ExitCode1, ImagePullBackOff); the Service's
// conditions only repeat its message. Conditions of a generation Knative has
// not observed yet say nothing about the current spec.
func Service(svc *servingv1.Service, latest *servingv1.Revision) ServiceState {
	if svc == nil {
		return ServiceState{Message: msgNoService}
	}
	st := svc.Status
	s := ServiceState{
		LatestReadyRevision: st.LatestReadyRevisionName, LatestCreatedRevision: st.LatestCreatedRevisionName,
		Message: "the Knative Service has no Ready condition yet",
	}
	if st.URL != nil {
		s.URL = st.URL.String()
	}
	s.Serving = s.LatestReadyRevision != "" && st.GetCondition(servingv1.ServiceConditionRoutesReady).IsTrue()
	s.Traffic = traffic(st.Traffic)
	if st.ObservedGeneration != svc.Generation {
		s.Message = fmt.Sprintf("Knative has not observed generation %d of the Service yet", svc.Generation)
		return s
	}
	if c := st.GetCondition(apis.ConditionReady); c != nil {
		s.Ready, s.Message = c.IsTrue(), said(c)
	}
	cfg := st.GetCondition(servingv1.ServiceConditionConfigurationsReady)
	if !cfg.IsFalse() {
		// A Configuration that fails leaves its Route nothing to route;
		// only a Route that fails on its own says something new.
		if r := st.GetCondition(servingv1.ServiceConditionRoutesReady); r.IsFalse() {
			s.RouteFailed, s.Message = true, said(r)
		}
		return s
	}
	s.Failed, s.Message = true, said(cfg)
	if latest != nil && latest.Name == s.LatestCreatedRevision {
		if c := latest.Status.GetCondition(apis.ConditionReady); c.IsFalse() {
			s.Message = "Revision " + latest.Name + ": " + said(c)
		}
	}
	return s
}

// WithCrashLoop is s with its latest Revision failed as crash says, the
// CrashLoop of one of its pods (Unready): what the pod does now is said in
// place of what Knative said before, which is either the same or stale. A
// Route's own failure stands.
func (s ServiceState) WithCrashLoop(crash string) ServiceState {
	if crash == "" || s.Ready || s.RouteFailed || s.LatestCreatedRevision == s.LatestReadyRevision {
		return s
	}
	s.Failed, s.Message = true, "Revision "+s.LatestCreatedRevision+": "+crash
	return s
}

// traffic converts the traffic Knative reports.
func traffic(in []servingv1.TrafficTarget) []v1alpha1.TrafficObservation {
	var out []v1alpha1.TrafficObservation
	for _, t := range in {
		o := v1alpha1.TrafficObservation{RevisionName: t.RevisionName, LatestRevision: ptr.Deref(t.LatestRevision, false), Percent: ptr.Deref(t.Percent, 0), Tag: t.Tag}
		if t.URL != nil {
			o.URL = t.URL.String()
		}
		out = append(out, o)
	}
	return out
}

// Record writes what Knative reports of the Service into a workload's
// observation.
func (s ServiceState) Record(at *v1alpha1.WorkloadObservation) {
	at.URL, at.LatestReadyRevision, at.Traffic, at.FailedRevision = s.URL, s.LatestReadyRevision, s.Traffic, ""
	if s.Failed {
		at.FailedRevision = s.LatestCreatedRevision
	}
}

// Failure says which Revision fails and why, and which still serves; it is
// empty when none fails.
func (s ServiceState) Failure() string {
	if !s.Failed {
		return ""
	}
	if s.Serving {
		return s.Message + "; Revision " + s.LatestReadyRevision + " still serves"
	}
	return s.Message
}

// An EventingState says whether a workload's Broker and Triggers deliver,
// as Knative Eventing reports them.
type EventingState struct {
	Ready bool

	// Failed says Knative reports that one of them cannot deliver; a new
	// spec or another object is needed, waiting will not help.
	Failed bool

	// Message names the first that is not Ready, and why.
	Message string
}

// MsgWaitEventing begins what a workload says while its Broker or a Trigger
// is not Ready yet.
const MsgWaitEventing = "waiting for Knative Eventing: "

// A knativeObject is a Broker, Trigger or PingSource, whose status is
// Knative's duck type.
type knativeObject interface {
	kube.Object
	GetStatus() *duckv1.Status
}

// EventingReadiness reads the Ready condition of the Broker a workload
// creates and of each of its Triggers and PingSources, as live finds them,
// and names the first that is not Ready. A Trigger's Ready condition carries
// the reason of the one that fails it: BrokerReady, SubscriberResolved or
// DeadLetterSinkResolved.
func EventingReadiness(desired []kube.Object, live func(kube.Object) kube.Object) EventingState {
	for _, d := range desired {
		what := d.GetObjectKind().GroupVersionKind().Kind + " " + d.GetName()
		l, ok := live(d).(knativeObject)
		if !ok {
			return EventingState{Message: what + " does not exist yet"}
		}
		st := l.GetStatus()
		if st.ObservedGeneration != l.GetGeneration() {
			return EventingState{Message: fmt.Sprintf("%s: Knative has not observed generation %d yet", what, l.GetGeneration())}
		}
		c := st.GetCondition(apis.ConditionReady)
		switch {
		case c == nil:
			return EventingState{Message: what + " has no Ready condition yet"}
		case c.IsFalse() && sinkPending(d, c):
			return EventingState{Message: what + ": " + said(c) + msgSinkPending}
		case c.IsFalse() && subscriberPending(d, c):
			return EventingState{Message: what + ": " + said(c) + msgSubscriberPending}
		case c.IsFalse():
			return EventingState{Failed: true, Message: what + ": " + said(c)}
		case !c.IsTrue():
			return EventingState{Message: what + ": " + said(c)}
		}
	}
	return EventingState{Ready: true}
}

// msgSinkPending says why a PingSource that found no sink is waited for.
const msgSinkPending = " (its sink is the workload's own Service, which Knative's PingSource reconciler resolves again once the Service has an address)"

// sinkPending is true for a PingSource whose sink was not found. Its sink
// is always the workload's own Service, which is Ready by the time eventing
// is judged, so this is the PingSource's status from before the Service had
// an address, not a failure.
func sinkPending(d kube.Object, c *apis.Condition) bool {
	return d.GetObjectKind().GroupVersionKind().Kind == "PingSource" && c.Reason == "NotFound"
}

// msgSubscriberPending says why a Trigger that found no address for its
// subscriber is waited for.
const msgSubscriberPending = " (its subscriber is a Knative Service of the workload's own, which Knative's Trigger reconciler resolves again once the Service has an address)"

// reasonSubscriberUnresolved is the reason Knative's Trigger reconciler
// gives a subscriber it cannot resolve to a URI.
const reasonSubscriberUnresolved = "Unable to get the Subscriber's URI"

// subscriberPending is true for a Trigger of a Knative Service of the
// workload's own (its Service, or an agent's relay) that found no address
// for it: the Trigger was reconciled before the Service had one, which real
// Eventing reports as False, not Unknown. The subscriber is read from the
// desired Trigger: the function reads only the status of what it composed.
func subscriberPending(desired kube.Object, c *apis.Condition) bool {
	t, ok := desired.(*eventingv1.Trigger)
	return ok && c.Reason == reasonSubscriberUnresolved && t.Spec.Subscriber.Ref != nil && t.Spec.Subscriber.Ref.Kind == "Service"
}

// said is a Knative condition's reason and message.
func said(c *apis.Condition) string {
	return joined(c.Reason, c.Message)
}

// joined is a reason and a message, such as a condition's or a waiting
// container's, as one text.
func joined(reason, message string) string {
	if reason == "" || message == "" {
		return reason + message
	}
	return reason + ": " + message
}

// BrokerAddress is the address a Broker reports, or "" before it has one.
func BrokerAddress(b *eventingv1.Broker) string {
	if b.Status.Address == nil || b.Status.Address.URL == nil {
		return ""
	}
	return b.Status.Address.URL.String()
}
