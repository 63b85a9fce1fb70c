package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	platformv1alpha1 "github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// Outcomes of a pass, the values of the outcome label: the composite's
// progress, or fatal when the pass returned nothing to apply.
const (
	passReady       = "ready"
	passProgressing = "progressing"
	passStalled     = "stalled"
	passFatal       = "fatal"
)

// Every label is bounded: the four composite kinds, two modes, the outcomes
// and the condition reasons; no composite's name labels a series.
var (
	passesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lambda", Subsystem: "function", Name: "passes_total",
		Help: "Passes the composition function ran, by composite kind, mode, outcome (ready, progressing, stalled, fatal) and the reason it gives the composite.",
	}, []string{"kind", "mode", "outcome", "reason"})

	passDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lambda", Subsystem: "function", Name: "pass_duration_seconds",
		Help:    "How long a pass took, source resolution and render included, by composite kind and mode.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
	}, []string{"kind", "mode"})
)

// compositeKinds are the kinds the function serves.
var compositeKinds = []string{platformv1alpha1.LambdaKind, platformv1alpha1.XLambdaKind, platformv1alpha1.AgentKind, platformv1alpha1.XAgentKind}

// registerMetrics registers the function's metrics, each bounded series of
// durations at zero, so a scrape lists them before the first pass.
func registerMetrics(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{passesTotal, passDuration} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	for _, k := range compositeKinds {
		for _, m := range []v1beta1.Mode{v1beta1.ModeDirect, v1beta1.ModeManaged} {
			passDuration.WithLabelValues(k, string(m))
		}
	}
	return nil
}

// recordPass counts a pass and how long it took.
func recordPass(kind string, mode v1beta1.Mode, outcome, reason string, took time.Duration) {
	passesTotal.WithLabelValues(kind, string(mode), outcome, reason).Inc()
	passDuration.WithLabelValues(kind, string(mode)).Observe(took.Seconds())
}

// passOutcome is the outcome label of a pass's outcome.
func passOutcome(v observe.Verdict) string {
	switch progressOf(v) {
	case done:
		return passReady
	case stuck:
		return passStalled
	case working:
	}
	return passProgressing
}
