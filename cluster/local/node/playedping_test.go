package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

// A ping is what a test compares of how Knative reported a PingSource: its
// conditions without times, the sink it resolved and the events it says
// it sends.
type ping struct {
	Conditions []apis.Condition
	SinkURI    string
	Events     []duckv1.CloudEventAttributes
}

// pingOf is the ping of a PingSource.
func pingOf(ps *sourcesv1.PingSource) ping {
	return ping{Conditions: conditions(ps.Status.Conditions), SinkURI: ps.Status.SinkURI.String(), Events: ps.Status.CloudEventAttributes}
}

// reasonAdapterStarting is the Deployment controller's reason that
// Knative repeats while the shared PingSource adapter, which it scales up
// from zero for the cluster's first PingSource, is not available yet: on a
// busy node, for seconds. playact writes what follows.
const reasonAdapterStarting = "MinimumReplicasUnavailable"

// TestPlayedPingAsReal holds playact to real Knative Eventing's PingSource
// reconciler: a schedule whose function serves, and one whose Service does
// not exist, are reported on the real node as playact writes them. The
// provider's and the function's tests that play schedules on the API
// server alone stand on this.
func TestPlayedPingAsReal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	svc := builtInline(ctx, t, c, kube, runtimes["Python3.11"], nil).Service
	if err := kube.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	serviceReady(ctx, t, c, kube, svc)

	cases := map[string]struct {
		reason string
		sink   *servingv1.Service
	}{
		"SinkResolves": {
			reason: "A schedule of a function that serves resolves the Service's address, and the shared adapter runs it.",
			sink:   svc,
		},
		"SinkMissing": {
			reason: "A schedule of a Service that does not exist has no sink, with reason NotFound and no message.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sink := "gone"
			if tc.sink != nil {
				sink = tc.sink.Name
			}
			ps := &sourcesv1.PingSource{
				ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: strings.ToLower(name)},
				Spec: sourcesv1.PingSourceSpec{
					SourceSpec: duckv1.SourceSpec{Sink: duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: sink}}},
					// Once a year: the test reads the status, not events.
					Schedule: "0 0 1 1 *", ContentType: "application/json", Data: `{"id": 7}`,
				},
			}
			if err := kube.Create(ctx, ps); err != nil {
				t.Fatal(err)
			}
			err := poll(ctx, func(ctx context.Context) (bool, error) {
				err := kube.Get(ctx, client.ObjectKeyFromObject(ps), ps)
				ready := ps.Status.GetCondition(apis.ConditionReady)
				return err == nil && ps.Status.ObservedGeneration == ps.Generation && ready != nil && !ready.IsUnknown() && ready.Reason != reasonAdapterStarting, err
			})
			if err != nil {
				t.Fatalf("Knative did not report on the PingSource (%v): %+v", err, ps.Status.Conditions)
			}
			played := ps.DeepCopy()
			playact.SettlePingSource(played, tc.sink)
			if diff := cmp.Diff(pingOf(ps), pingOf(played)); diff != "" {
				t.Errorf("%s\nplayact's PingSource: -real, +played:\n%s", tc.reason, diff)
			}
		})
	}
}
