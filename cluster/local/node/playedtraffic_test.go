package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// A routing is what a test compares of how Knative reported a Service
// after a change: its conditions, its Revisions, the traffic its Route
// resolved, and what observe reads of it, with every host in the played
// cluster's domain.
type routing struct {
	Service                    []apis.Condition
	LatestCreated, LatestReady string
	Traffic                    []servingv1.TrafficTarget
	Observed                   observe.ServiceState
}

// routingOf is the routing of a Service whose hosts are in domain.
func routingOf(svc *servingv1.Service, domain string) routing {
	inPlayed := func(u *apis.URL) *apis.URL {
		if u == nil {
			return nil
		}
		c := *u
		c.Host = strings.TrimSuffix(c.Host, domain) + playedDomain
		return &c
	}
	r := routing{
		Service:       conditions(svc.Status.Conditions),
		LatestCreated: svc.Status.LatestCreatedRevisionName, LatestReady: svc.Status.LatestReadyRevisionName,
	}
	for _, t := range svc.Status.Traffic {
		t.URL = inPlayed(t.URL)
		r.Traffic = append(r.Traffic, t)
	}
	in := svc.DeepCopy()
	in.Status.URL = inPlayed(in.Status.URL)
	in.Status.Traffic = r.Traffic
	r.Observed = observe.Service(in, nil)
	return r
}

// playedDomain is the domain of the cluster playact plays.
const playedDomain = "example.com"

// TestPlayedTrafficAsReal holds playact to real Knative Serving over a
// Service's generations: a version that crashes leaves the traffic on the
// Revision before; a traffic-only change with tags makes no Revision and
// gives each tag its host; a pin to a Revision that does not exist fails
// the Route and keeps the traffic it routed. Each is reported on the real
// node as playact reports it when it plays the same changes in order. The
// provider's and the function's tests that roll back, split traffic and
// fail a version on the API server alone stand on this.
func TestPlayedTrafficAsReal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kube := targetClient(t)
	svc := builtService(ctx, t, "traffic")
	first := svc.Name + "-00001"

	steps := []struct {
		reason string
		change func(*servingv1.Service)
		fault  playact.RevisionFault
	}{
		{
			reason: "The first Revision serves and takes every request.",
		},
		{
			reason: "A version whose container keeps exiting fails at its progress deadline, and the Revision before keeps the traffic.",
			change: func(svc *servingv1.Service) {
				if svc.Spec.Template.Annotations == nil {
					svc.Spec.Template.Annotations = map[string]string{}
				}
				svc.Spec.Template.Annotations[annotationProgressDeadline] = "20s"
				svc.Spec.Template.Spec.Containers[0].Command = []string{"python", "-c", "import sys; sys.stderr.write('refusing to start'); sys.exit(3)"}
			},
			fault: playact.CrashLoop(3, "refusing to start"),
		},
		{
			reason: "A traffic-only change makes no Revision: the first takes every request at its tag's host, the latest ready one at its own.",
			change: func(svc *servingv1.Service) {
				svc.Spec.Traffic = []servingv1.TrafficTarget{
					{RevisionName: first, Percent: ptr.To[int64](100), Tag: "stable"},
					{LatestRevision: ptr.To(true), Percent: ptr.To[int64](0), Tag: "canary"},
				}
			},
		},
		{
			reason: "A pin to a Revision that does not exist fails the Route, which keeps the traffic it routed.",
			change: func(svc *servingv1.Service) {
				svc.Spec.Traffic = []servingv1.TrafficTarget{{RevisionName: svc.Name + "-00009", Percent: ptr.To[int64](100)}}
			},
		},
	}
	played := svc.DeepCopy()
	var revisions []servingv1.Revision
	for i, s := range steps {
		if s.change != nil {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
				t.Fatal(err)
			}
			s.change(svc)
			if err := kube.Update(ctx, svc); err != nil {
				t.Fatal(err)
			}
		} else if err := kube.Create(ctx, svc); err != nil {
			t.Fatal(err)
		}
		reported(ctx, t, kube, svc)
		real := routingOf(svc, Domain)

		played.Spec, played.Generation = svc.Spec, svc.Generation
		newest, made := playact.Reconcile(played, revisions, s.fault)
		if made {
			revisions = append(revisions, *newest)
		}
		if diff := cmp.Diff(real, routingOf(played, playedDomain)); diff != "" {
			t.Errorf("step %d: %s\nplayact's routing: -real, +played:\n%s", i+1, s.reason, diff)
		}
	}
}
