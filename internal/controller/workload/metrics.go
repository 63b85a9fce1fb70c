package workload

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Build outcomes, the values of the outcome label.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
)

var (
	buildsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lambda", Name: "builds_total",
		Help: "Image builds that finished, by outcome.",
	}, []string{"outcome"})

	buildDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lambda", Name: "build_duration_seconds",
		Help:    "How long image builds took, from the Job's start to its end, by outcome.",
		Buckets: prometheus.ExponentialBuckets(5, 2, 10),
	}, []string{"outcome"})

	timeToReady = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lambda", Name: "time_to_ready_seconds",
		Help:    "How long a resource took from its creation to its first Ready, by kind.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(buildsTotal, buildDuration, timeToReady)
}

// recordBuild counts a finished build and its duration, when known.
func recordBuild(outcome string, took time.Duration) {
	buildsTotal.WithLabelValues(outcome).Inc()
	if took > 0 {
		buildDuration.WithLabelValues(outcome).Observe(took.Seconds())
	}
}
