package playact

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"knative.dev/eventing/pkg/apis/feature"
	knsourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

// SettlePingSource computes, without writing it, the status Knative's
// pingsource reconciler gives a PingSource whose sink is a Knative Service:
// the sink resolved to the address the Service reports, the shared adapter
// Deployment available and the event type announced, or SinkProvided False
// with reason NotFound and no message while it reports none (the
// reconciler's MarkNoSink), and nothing more; OIDC off, as Knative's
// default feature flags have it.
func SettlePingSource(ps *sourcesv1.PingSource, sink *servingv1.Service) {
	knativetest.In(ps, func(ps *knsourcesv1.PingSource) { settlePingSource(ps, sink) })
}

// settlePingSource is SettlePingSource in Knative's own types, whose status
// methods it writes with.
func settlePingSource(ps *knsourcesv1.PingSource, sink *servingv1.Service) {
	st := &ps.Status
	*st = knsourcesv1.PingSourceStatus{}
	st.InitializeConditions()
	st.MarkOIDCIdentityCreatedSucceededWithReason(fmt.Sprintf("%s feature disabled", feature.OIDCAuthentication), "")
	st.ObservedGeneration = ps.Generation
	if sink == nil || sink.Status.Address == nil || sink.Status.Address.URL == nil {
		// The reconciler returns here: the adapter's availability stays
		// unknown and no event type is announced (TestPlayedPingAsReal).
		st.MarkNoSink("NotFound", "")
		return
	}
	st.MarkSink(&duckv1.Addressable{URL: sink.Status.Address.URL})
	st.PropagateDeploymentAvailability(&appsv1.Deployment{Status: appsv1.DeploymentStatus{
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}},
	}})
	st.CloudEventAttributes = []duckv1.CloudEventAttributes{{Type: knsourcesv1.PingSourceEventType, Source: knsourcesv1.PingSourceSource(ps.Namespace, ps.Name)}}
}

// SettlePingSourceIn settles a PingSource against the Service its sink
// names, as the reconciler resolves it, and writes the status.
func SettlePingSourceIn(ctx context.Context, t T, c client.Client, ps *sourcesv1.PingSource) {
	t.Helper()
	var sink *servingv1.Service
	if ref := ps.Spec.Sink.Ref; ref != nil {
		svc := &servingv1.Service{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: ref.Name}, svc)
		switch {
		case err == nil:
			sink = svc
		case client.IgnoreNotFound(err) != nil:
			t.Fatal(err)
		}
	}
	SettlePingSource(ps, sink)
	if err := c.Status().Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
}

// unreportedPings lists the PingSources of a namespace that are not Ready
// at their generation.
func unreportedPings(ctx context.Context, c client.Client, namespace string) ([]*sourcesv1.PingSource, error) {
	l := &sourcesv1.PingSourceList{}
	if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var out []*sourcesv1.PingSource
	for i := range l.Items {
		ps := &l.Items[i]
		if !reported(ps, ps.Status.Status) {
			out = append(out, ps)
		}
	}
	return out, nil
}
