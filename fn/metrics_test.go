package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestPassMetrics checks that each pass is counted by its kind, mode,
// outcome and reason.
func TestPassMetrics(t *testing.T) {
	const image = "source: {image: {repository: ghcr.io/acme/hello, tag: v1}}\n"
	cases := map[string]struct {
		reason        string
		spec          string
		outcome, says string
	}{
		"Progressing": {
			reason: "A prebuilt image's first pass waits for Knative.",
			spec:   image, outcome: passProgressing, says: "Deploying",
		},
		"Stalled": {
			reason: "A schedule Knative refuses stalls the composite.",
			spec:   image + "eventing: {schedules: [{name: nightly, schedule: '0 22-6 * * *'}]}\n", outcome: passStalled, says: "InvalidSpec",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := passesTotal.WithLabelValues("Lambda", "Direct", tc.outcome, tc.says)
			before := testutil.ToFloat64(c)
			runDirect(t, tc.spec, nil)
			if got := testutil.ToFloat64(c) - before; got != 1 {
				t.Errorf("%s\nlambda_function_passes_total{outcome=%q,reason=%q} rose by %v, want 1", tc.reason, tc.outcome, tc.says, got)
			}
		})
	}
}
