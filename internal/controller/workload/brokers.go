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
	own := render.CreatedBroker(d.namespace, b)
	if len(own) == 0 {
		return d.brokersNamed(e.GetCreatedBrokers(), "")
	}
	return append([][]kube.Object{own}, d.brokersNamed(e.GetCreatedBrokers(), own[len(own)-1].GetName())...)
}

// retire finds what is left of the Brokers the resource created that it no
// longer uses (its spec stopped creating one or named another): the plan's
// Update deletes them as createdBrokers' are on deletion, and the status
// keeps naming them until they are gone, so a failed Update or a restarted
// provider does not forget them. A Broker the spec still uses but no longer
// creates is handed over, neither deleted nor named.
func (d deployer) retire(ctx context.Context, st *liveState, created []string, uses string) error {
	left, err := d.sharedLeft(ctx, d.brokersNamed(created, uses)...)
	if err != nil || len(left) == 0 {
		return err
	}
	for _, o := range left {
		st.differences = append(st.differences, render.Key(o)+": left over")
		if !slices.Contains(st.retiring, o.GetName()) {
			st.retiring = append(st.retiring, o.GetName())
		}
	}
	slices.Sort(st.differences)
	st.upToDate = false
	return nil
}

// brokersNamed returns, as render.BrokerNamed does, the objects of each
// Broker of the names but except.
func (d deployer) brokersNamed(names []string, except string) [][]kube.Object {
	var brokers [][]kube.Object
	for _, name := range names {
		if name != except {
			brokers = append(brokers, render.BrokerNamed(d.namespace, name))
		}
	}
	return brokers
}
