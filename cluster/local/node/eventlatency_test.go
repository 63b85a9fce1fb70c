package node

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// eventsPerRound is how many events a round of BenchmarkEvents/Warm sends,
// one after another.
const eventsPerRound = 50

// BenchmarkEvents measures a CloudEvent's way through real Eventing, from
// the producer's post to the function's Broker, through its Trigger to the
// function, until the function's reply, sent back through the Broker,
// reached a subscriber (p50-ms, p99-ms): while the function runs (Warm,
// eventsPerRound events one after another each round), and with the
// function at zero before each event (AtZero).
func BenchmarkEvents(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, kube := sharedCluster(b), targetClient(b)
	sink := RecordingSink(b)
	built := builtInline(ctx, b, c, kube, runtimes["Python3.11"], nil)
	svc := built.Service
	deployedIdle(ctx, b, c, kube, svc)
	ingress := repliesTo(ctx, b, kube, built, sink)
	// For a moment after Knative reports them Ready, the data plane may
	// not know the Broker and Triggers yet.
	firstDelivery(ctx, b, ingress, sink.Got, `{"id": "warm-up"}`)

	b.Run("Warm", func(b *testing.B) {
		var took []time.Duration
		for b.Loop() {
			for range eventsPerRound {
				took = append(took, roundTrip(ctx, b, ingress, sink, fmt.Sprintf("order-%d", len(took))))
			}
		}
		reportLatencies(b, took)
	})
	b.Run("AtZero", func(b *testing.B) {
		var took []time.Duration
		for b.Loop() {
			b.StopTimer()
			scaledToZero(ctx, b, kube, svc)
			b.StartTimer()
			took = append(took, roundTrip(ctx, b, ingress, sink, fmt.Sprintf("cold-%d", len(took))))
		}
		reportLatencies(b, took)
	})
}

// roundTrip posts an order event of the id to the Broker's ingress and
// waits until the function's reply to it reached the sink; it returns how
// long that took.
func roundTrip(ctx context.Context, t testing.TB, ingress string, sink *Sink, id string) time.Duration {
	t.Helper()
	start := time.Now()
	status, body, err := post(ctx, ingress, fmt.Sprintf(`{"id": %q}`, id))
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("the Broker's ingress answered %d %q (%v); want 202", status, body, err)
	}
	want := fmt.Sprintf(`{"accepted":%q}`, id)
	for {
		select {
		case r := <-sink.Got:
			if strings.Join(strings.Fields(r.Body), "") == want {
				return time.Since(start)
			}
		case <-time.After(sendTimeout):
			t.Fatalf("the function's reply to %s never reached its subscriber", id)
		}
	}
}

// reportLatencies reports the latencies' p50 and p99.
func reportLatencies(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(percentile(took, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(took, 99).Microseconds())/1000, "p99-ms")
}
