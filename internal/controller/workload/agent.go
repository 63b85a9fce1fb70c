package workload

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/lifecycle"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errGetTargetAgent = "cannot get the LambdaAgent a forward targets"
	errGetBroker      = "cannot get the Broker a forward targets"
)

// An agentClient acts on one LambdaAgent's objects in its target cluster.
type agentClient struct {
	connection

	// plan is what the reconcile's Observe rendered and found, for its
	// Create or Update.
	plan plan
}

// Observe renders the agent, with the addresses of the Brokers its forwards
// and its own replies go to, and compares what is deployed with it.
func (c *agentClient) Observe(ctx context.Context, mg *v1alpha1.LambdaAgent) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		return c.deleting(ctx, usedBrokers(mg.Spec.ForProvider.Eventing.GetBroker(), mg.Status.AtProvider.Eventing))
	}
	spec := mg.Spec.ForProvider
	observed, err := c.addresses(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	observed.Served = mg.Status.AtProvider.LatestReadyRevision != ""
	at := &mg.Status.AtProvider
	was := at.Phase
	in := render.AgentInput{Namespace: mg.Namespace, Name: mg.Name, Spec: spec, Defaults: c.defaults, Observed: observed}
	obs, err := lifecycle.Agent(ctx, in, was, agentPass{workloadPass{connection: c.connection, mg: mg, at: at, plan: &c.plan}})
	readyTransition(c.record, mg, was, at.Phase, at.URL)
	return obs, err
}

// addresses reads the address of every Broker the agent sends events to:
// its own (for replies) and its forwards' targets, and which targets refuse
// it. A Broker without an address yet is left out; render says what waits
// for it.
func (c *agentClient) addresses(ctx context.Context, mg *v1alpha1.LambdaAgent) (render.Observed, error) {
	targets, err := render.BrokerTargets(mg.Namespace, mg.Name, mg.Spec.ForProvider.Eventing, func(namespace, agent string) (*v1alpha1.AgentEventing, bool, error) {
		a := &v1alpha1.LambdaAgent{}
		if err := c.local.Get(ctx, types.NamespacedName{Namespace: namespace, Name: agent}, a); err != nil {
			return nil, false, errors.Wrap(client.IgnoreNotFound(err), errGetTargetAgent)
		}
		return a.Spec.ForProvider.Eventing, true, nil
	})
	if err != nil {
		return render.Observed{}, err
	}
	addrs := map[string]string{}
	for key, ref := range targets.Brokers {
		b := &eventingv1.Broker{}
		if err := c.kube.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, b); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return render.Observed{}, errors.Wrap(err, errGetBroker)
			}
			continue
		}
		if a := observe.BrokerAddress(b); a != "" {
			addrs[key] = a
		}
	}
	return render.Observed{ForwardAddresses: addrs, Refused: targets.Refused}, nil
}

// Create applies what Observe rendered.
func (c *agentClient) Create(ctx context.Context, mg *v1alpha1.LambdaAgent) (managed.ExternalCreation, error) {
	if err := c.apply(ctx, c.plan); err != nil {
		return managed.ExternalCreation{}, err
	}
	c.created(mg, c.plan.desired)
	return managed.ExternalCreation{}, nil
}

// Update applies what Observe rendered.
func (c *agentClient) Update(ctx context.Context, _ *v1alpha1.LambdaAgent) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, c.apply(ctx, c.plan)
}

// Delete removes every object of the agent, and the Broker it created once
// no one else uses it.
func (c *agentClient) Delete(ctx context.Context, mg *v1alpha1.LambdaAgent) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, c.remove(ctx, usedBrokers(mg.Spec.ForProvider.Eventing.GetBroker(), mg.Status.AtProvider.Eventing))
}

// Disconnect does nothing: target clients are cached.
func (c *agentClient) Disconnect(context.Context) error { return nil }
