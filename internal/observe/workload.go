package observe

import (
	"strings"

	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	"knative.dev/pkg/apis"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A ServiceState is what Knative reports of a Service.
type ServiceState struct {
	URL                 string
	LatestReadyRevision string
	Ready               bool

	// Message says why the Service is not Ready.
	Message string
}

// Service reads a Knative Service's URL, revision and Ready condition.
func Service(svc *servingv1.Service) ServiceState {
	s := ServiceState{LatestReadyRevision: svc.Status.LatestReadyRevisionName, Message: "the Knative Service has no Ready condition yet"}
	if svc.Status.URL != nil {
		s.URL = svc.Status.URL.String()
	}
	if c := svc.Status.GetCondition(apis.ConditionReady); c != nil {
		s.Ready, s.Message = c.IsTrue(), strings.TrimSpace(c.Reason+": "+c.Message)
	}
	return s
}

// BrokerAddress is the address a Broker reports, or "" before it has one.
func BrokerAddress(b *eventingv1.Broker) string {
	if b.Status.Address == nil || b.Status.Address.URL == nil {
		return ""
	}
	return b.Status.Address.URL.String()
}

// Eventing names a workload's Broker and Triggers.
func Eventing(objs *render.Objects) *v1alpha1.EventingObservation {
	if objs.Broker == nil && len(objs.Triggers) == 0 {
		return nil
	}
	e := &v1alpha1.EventingObservation{}
	if objs.Broker != nil {
		e.Broker = objs.Broker.Name
	}
	for _, t := range objs.Triggers {
		e.Broker = t.Spec.Broker
		e.Triggers = append(e.Triggers, t.Name)
	}
	return e
}
