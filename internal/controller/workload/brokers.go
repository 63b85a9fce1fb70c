package workload

import (
	"context"
	"slices"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// createdBrokers returns the objects of each Broker a resource on its way
// out created and must delete as its last user: the one its spec creates
// and those its status says it created before and has yet to delete.
func (d deployer) createdBrokers(b *v1alpha1.Broker, e *v1alpha1.EventingObservation) [][]kube.Object {
	var brokers [][]kube.Object
	spec := ""
	if own := render.CreatedBroker(d.namespace, b); len(own) > 0 {
		brokers, spec = append(brokers, own), own[len(own)-1].GetName()
	}
	for _, name := range e.GetCreatedBrokers() {
		if name != spec {
			brokers = append(brokers, render.BrokerNamed(d.namespace, name))
		}
	}
	return brokers
}

// retire finds what is left of the Brokers the resource created that it no
// longer uses (its spec stopped creating one or named another): the plan's
// Update deletes them as createdBrokers' are on deletion, and the status
// keeps naming them until they are gone, so a failed Update or a restarted
// provider does not forget them. A Broker the spec still uses but no longer
// creates is handed over, neither deleted nor named.
func (d deployer) retire(ctx context.Context, st *liveState, created []string, uses string) error {
	var stale [][]kube.Object
	for _, name := range created {
		if name != uses {
			stale = append(stale, render.BrokerNamed(d.namespace, name))
		}
	}
	left, err := d.sharedLeft(ctx, stale...)
	if err != nil || len(left) == 0 {
		return err
	}
	for _, o := range left {
		st.differences = append(st.differences, render.Key(o)+": left over")
		if !slices.ContainsFunc(st.retiring, func(b []kube.Object) bool { return b[len(b)-1].GetName() == o.GetName() }) {
			st.retiring = append(st.retiring, render.BrokerNamed(d.namespace, o.GetName()))
		}
	}
	slices.Sort(st.differences)
	st.upToDate = false
	return nil
}

// retiringNames are the names of the Brokers st retires.
func retiringNames(st liveState) []string {
	names := make([]string, len(st.retiring))
	for i, b := range st.retiring {
		names[i] = b[len(b)-1].GetName()
	}
	return names
}
