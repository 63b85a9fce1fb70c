package main

import (
	"context"
	"maps"
	"slices"

	platformv1alpha1 "github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/lifecycle"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// directAgent composes an Agent's Knative Service, Broker and Triggers.
func (p *pass) directAgent(ctx context.Context, in *v1beta1.Input) (observe.Verdict, error) {
	xr := p.xr.agentXR
	status := &xr.Status.WorkloadObservation
	if err := p.setStatus(status); err != nil {
		return observe.Verdict{}, err
	}
	observed, ok, err := p.forwardAddresses(xr.Spec.Eventing)
	if err != nil || !ok {
		return p.waiting(), err
	}
	observed.Served = status.LatestReadyRevision != ""
	d, v, ok, err := p.defaults(in)
	if err != nil || !ok {
		return v, err
	}
	rin := render.AgentInput{Namespace: p.xr.namespace, Name: p.xr.name, Spec: xr.Spec.LambdaAgentParameters, Defaults: d, Observed: observed}
	return lifecycle.Agent(ctx, rin, status.Phase, agentSteps{workloadSteps{pass: p, at: status, full: status}})
}

// agentSteps take a Direct pass's steps of an Agent's lifecycle.
type agentSteps struct{ workloadSteps }

// Render renders in, writing the objects' encodings into the answer's
// buffers.
func (s agentSteps) Render(in render.AgentInput) (*render.Objects, error) {
	return render.AgentEncoded(in, s.lend)
}

// forwardAddresses are the addresses of every Broker the agent sends events
// to: its own, for replies, and its forwards' targets, and which targets
// refuse it. A target agent names its Broker and whom it accepts in its
// spec, so it is required first, then its Broker. A Broker without an
// address yet is left out; render says what waits for it.
func (p *pass) forwardAddresses(e *v1alpha1.AgentEventing) (render.Observed, bool, error) {
	done := true
	targets, err := render.BrokerTargets(p.xr.namespace, p.xr.name, e, func(namespace, agent string) (*v1alpha1.AgentEventing, bool, error) {
		target, found, ok, err := p.targetAgent(namespace, agent)
		done = done && ok
		return target, found, err
	})
	if err != nil {
		return render.Observed{}, false, err
	}
	addrs := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(targets.Brokers)) {
		ref := targets.Brokers[key]
		items, ok, err := requireAs[eventingv1.Broker](p, p.requirement(requireBroker, ref.Namespace, ref.Name), byName(eventingv1.SchemeGroupVersion.String(), "Broker", ref.Namespace, ref.Name), statusOnly)
		if err != nil {
			return render.Observed{}, false, err
		}
		done = done && ok
		if len(items) == 0 {
			continue
		}
		if a := observe.BrokerAddress(&items[0]); a != "" {
			addrs[key] = a
		}
	}
	return render.Observed{ForwardAddresses: addrs, Refused: targets.Refused}, done, nil
}

// targetAgent is the eventing spec of the agent a forward targets: an Agent
// beside a namespaced composite, an AgentClaim beside a claimed one. found
// is false when it does not exist; ok is false until Crossplane has
// answered the requirement.
func (p *pass) targetAgent(namespace, name string) (e *v1alpha1.AgentEventing, found, ok bool, err error) {
	kind := platformv1alpha1.AgentKind
	if p.xr.kind == platformv1alpha1.XAgentKind {
		kind = platformv1alpha1.AgentClaimKind
	}
	items, ok, err := requireAs[platformv1alpha1.Agent](p, p.requirement(requireForwardAgent, namespace, name), byName(platformv1alpha1.SchemeGroupVersion.String(), kind, namespace, name), codec.Selection{"spec": nil})
	if err != nil || !ok || len(items) == 0 {
		return nil, false, ok, err
	}
	return items[0].Spec.Eventing, true, true, nil
}

// requirement names what a pass requires of an object: by its name alone in
// the composite's namespace, with its namespace otherwise.
func (p *pass) requirement(prefix, namespace, name string) string {
	if namespace == p.xr.namespace {
		return prefix + name
	}
	return prefix + namespace + "/" + name
}
