package workload

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A workloadPass takes the steps that end an Observe's pass over a
// workload in its target cluster (lifecycle.Workload): an Observe ends with
// an observation, and the plan its Create or Update applies.
type workloadPass struct {
	connection
	mg resource.Managed
	at *v1alpha1.WorkloadObservation
	// plan receives what Deploy found to apply.
	plan *plan
}

// Admit holds a workload whose Broker is missing.
func (p workloadPass) Admit(_ context.Context, objs *render.Objects) (*observe.Verdict, error) {
	msg, err := p.unserved(objs)
	if err != nil || msg == "" {
		return nil, err
	}
	v := observe.Held(p.at.Phase, v1alpha1.ReasonBrokerMissing, msg)
	return &v, nil
}

// Deploy compares what is deployed with objs, and plans what to apply.
func (p workloadPass) Deploy(ctx context.Context, objs *render.Objects) (managed.ExternalObservation, error) {
	obs, planned, err := p.deploy(ctx, p.mg, p.at, objs)
	*p.plan = planned
	return obs, err
}

// Hold judges the workload and applies nothing; a cause fails the
// reconcile, so the reconciler says why and retries.
func (p workloadPass) Hold(v observe.Verdict, cause error) (managed.ExternalObservation, error) {
	return holding(p.mg, p.at, v, cause)
}

// An agentPass takes an Observe's steps of a LambdaAgent's pass.
type agentPass struct{ workloadPass }

// Render renders in.
func (agentPass) Render(in render.AgentInput) (*render.Objects, error) {
	return render.Agent(in)
}
