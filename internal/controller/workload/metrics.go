package workload

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// Build outcomes, the values of the outcome label.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
)

// Sources the provider resolves, the values of the source label.
const (
	sourceGit = "git"
	sourceS3  = "s3"
)

// Every label is bounded: runtimes, outcomes, causes, sources and reasons
// are enums, and no resource name labels a series.
var (
	buildsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lambda", Name: "builds_started_total",
		Help: "Image builds the provider started, by runtime.",
	}, []string{"runtime"})

	buildsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lambda", Name: "builds_total",
		Help: "Image builds that finished, by outcome, runtime and, for a failure, the part that failed (build, fetch, fetch-not-started, deadline, no-digest, job).",
	}, []string{"outcome", "runtime", "cause"})

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

	sourceResolveDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lambda", Name: "source_resolve_duration_seconds",
		Help:    "How long resolving a git ref or an S3 prefix to its identity took, by source, answers reused within their freshness included.",
		Buckets: prometheus.ExponentialBuckets(0.005, 4, 8),
	}, []string{"source"})

	sourceResolveErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lambda", Name: "source_resolve_errors_total",
		Help: "Source resolutions that failed, by source and the reason the resource then gives (SourceUnresolved needs a user, SourceUnreachable is retried).",
	}, []string{"source", "reason"})

	pollInterval = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "lambda", Name: "poll_interval_seconds",
		Help: "How long each resource waits between polls: --poll, or longer while polling every resource that often would take more than --max-poll-share of --max-reconcile-rate.",
	})

	pollsPutOff = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "lambda", Name: "polls_put_off_total",
		Help: "Times a resource's poll found no reconcile to spare under --max-reconcile-rate and waited, leaving the rate to new resources, changed specs and wakes.",
	})
)

// runtimes are the languages builds run, for the series that start at zero.
var runtimes = []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo}

func init() {
	metrics.Registry.MustRegister(buildsStarted, buildsTotal, buildDuration, timeToReady, sourceResolveDuration, sourceResolveErrors, pollInterval, pollsPutOff,
		firstTimeToReconcile, firstTimeToReadiness, deletionTime, driftTime)
	// Every bounded series exists from the start, at zero, so a rate or an
	// alert over it works before its first event and a scrape lists it.
	for _, rt := range runtimes {
		buildsStarted.WithLabelValues(string(rt))
		buildsTotal.WithLabelValues(outcomeSucceeded, string(rt), "")
		for _, c := range observe.Causes {
			buildsTotal.WithLabelValues(outcomeFailed, string(rt), c)
		}
	}
	for _, o := range []string{outcomeSucceeded, outcomeFailed} {
		buildDuration.WithLabelValues(o)
	}
	for _, k := range []string{v1alpha1.LambdaFunctionKind, v1alpha1.LambdaAgentKind} {
		timeToReady.WithLabelValues(k)
	}
	for _, s := range []string{sourceGit, sourceS3} {
		sourceResolveDuration.WithLabelValues(s)
		for _, r := range []string{string(v1alpha1.ReasonSourceUnresolved), string(v1alpha1.ReasonSourceUnreachable)} {
			sourceResolveErrors.WithLabelValues(s, r)
		}
	}
}

// recordBuild counts a finished build and its duration, when known.
func recordBuild(outcome, runtime, cause string, took time.Duration) {
	buildsTotal.WithLabelValues(outcome, runtime, cause).Inc()
	if took > 0 {
		buildDuration.WithLabelValues(outcome).Observe(took.Seconds())
	}
}
