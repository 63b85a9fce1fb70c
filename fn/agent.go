package main

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"

	"github.com/crossplane/function-sdk-go/errors"

	platformv1alpha1 "github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// directAgent composes an Agent's Knative Service, Broker and Triggers.
func (p *pass) directAgent(in *v1beta1.Input) (outcome, error) {
	xr := p.xr.agentXR
	status := &xr.Status.WorkloadObservation
	if err := p.setStatus(status); err != nil {
		return outcome{}, err
	}
	addrs, ok, err := p.forwardAddresses(xr.Spec.Eventing)
	if err != nil || !ok {
		p.keep(all)
		return progressing(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, msgWaitRequired), err
	}
	d, held, ok, err := p.defaults(in)
	if err != nil || !ok {
		p.keep(all)
		return held, err
	}
	objs, err := render.Agent(render.AgentInput{Namespace: p.xr.namespace, Name: p.xr.name, Spec: xr.Spec.LambdaAgentParameters, Defaults: d, Observed: render.Observed{ForwardAddresses: addrs}})
	if err != nil {
		p.keep(all)
		return stalled(v1alpha1.ReasonInvalid, err.Error()), nil
	}
	o, err := p.deployed(objs, status)
	if err != nil {
		return outcome{}, err
	}
	return o, p.setStatus(status)
}

// forwardAddresses are the addresses of every Broker the agent sends events
// to: its own, for replies, and its forwards' targets. A target agent names
// its Broker in its spec, so it is required first, then its Broker. A Broker
// without an address yet is left out; render says what waits for it.
func (p *pass) forwardAddresses(e *v1alpha1.AgentEventing) (map[string]string, bool, error) {
	done := true
	targets, err := render.BrokerTargets(e, func(agent string) (string, error) {
		broker, ok, err := p.targetAgentBroker(agent)
		done = done && ok
		return broker, err
	})
	if err != nil {
		return nil, false, err
	}
	addrs := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(targets)) {
		name := targets[key]
		items, ok, err := p.require(requireBroker+name, byName(eventingv1.SchemeGroupVersion.String(), "Broker", p.xr.namespace, name))
		if err != nil {
			return nil, false, err
		}
		done = done && ok
		if len(items) == 0 {
			continue
		}
		b := &eventingv1.Broker{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[0].Object, b); err != nil {
			return nil, false, errors.Wrapf(err, errFmtConvert, "Broker", name)
		}
		if a := observe.BrokerAddress(b); a != "" {
			addrs[key] = a
		}
	}
	return addrs, done, nil
}

// targetAgentBroker is the Broker of the agent a forward targets: an Agent
// beside a namespaced composite, an AgentClaim beside a claimed one. ""
// when it does not exist.
func (p *pass) targetAgentBroker(name string) (string, bool, error) {
	kind := platformv1alpha1.AgentKind
	if p.xr.kind == platformv1alpha1.XAgentKind {
		kind = platformv1alpha1.AgentClaimKind
	}
	items, ok, err := p.require(requireForwardAgent+name, byName(platformv1alpha1.SchemeGroupVersion.String(), kind, p.xr.namespace, name))
	if err != nil || !ok || len(items) == 0 {
		return "", ok, err
	}
	a := &platformv1alpha1.Agent{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[0].Object, a); err != nil {
		return "", false, errors.Wrapf(err, errFmtConvert, kind, name)
	}
	return render.BrokerName(a.Spec.Eventing.GetBroker()), true, nil
}
