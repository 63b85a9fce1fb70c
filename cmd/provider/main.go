// Command provider runs provider-knative-lambda: the controllers of
// LambdaFunction, LambdaAgent and their provider configs.
package main

import (
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
	lambdacontroller "github.com/knative-lambda/provider-knative-lambda/internal/controller"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/workload"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	"github.com/knative-lambda/provider-knative-lambda/internal/logs"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

func main() {
	var (
		app              = kingpin.New(filepath.Base(os.Args[0]), "Crossplane provider for serverless functions and AI agents on Knative.").DefaultEnvars()
		debug            = app.Flag("debug", "Run with debug logging.").Short('d').Bool()
		syncInterval     = app.Flag("sync", "How often the controller manager resyncs every watched object, such as 1h.").Short('s').Default("1h").Duration()
		pollInterval     = app.Flag("poll", "How often each resource is checked for drift.").Default("1m").Duration()
		maxPollShare     = app.Flag("max-poll-share", "The most of --max-reconcile-rate the polls of all resources may take together, from 0 to 1; with more resources than that allows at --poll, each is polled less often. 0 polls each at --poll however many there are.").Default("0.5").Float64()
		_                = app.Flag("poll-state-metric", "Ignored, kept so that settings naming it still start: the managed resource state metrics follow each resource as it changes.").Hidden().Duration()
		maxReconcileRate = app.Flag("max-reconcile-rate", "Reconciles per second across all controllers, and concurrent reconciles per controller.").Default("10").Int()
		leaderElection   = app.Flag("leader-election", "Use leader election, so only one replica reconciles.").Short('l').Default("false").Envar("LEADER_ELECTION").Bool()
		metricsAddr      = app.Flag("metrics-bind-address", "Address the Prometheus metrics endpoint listens on.").Default(":8080").String()
		healthAddr       = app.Flag("health-probe-bind-address", "Address the /healthz and /readyz endpoints listen on.").Default(":8081").String()
		profile          = app.Flag("profile", "Serve Go's pprof profiles under /debug/pprof/ on the metrics endpoint.").Bool()
		denySourceCIDRs  = app.Flag("deny-source-cidr", "A network no git or S3 source or target cluster may be in, such as the cluster's Service and pod networks; repeat for more. Loopback, link-local, cloud metadata and the cluster's API server are always refused.").Strings()
		allowTargetCIDRs = app.Flag("allow-target-cidr", "A network a kubeconfig's target cluster may be in although it would be refused, such as 127.0.0.0/8 for a provider run outside a cluster against a local API server; repeat for more. Never set it for a provider that runs in a cluster.").Strings()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	setGCPercent(os.LookupEnv)
	if *maxPollShare < 0 || *maxPollShare > 1 {
		kingpin.Fatalf("--max-poll-share must be from 0 to 1, not %g", *maxPollShare)
	}
	deny, err := source.ParseCIDRs(*denySourceCIDRs)
	kingpin.FatalIfError(err, "Cannot parse --deny-source-cidr")
	allowTargets, err := source.ParseCIDRs(*allowTargetCIDRs)
	kingpin.FatalIfError(err, "Cannot parse --allow-target-cidr")

	zl := logs.Lazy(zap.New(zap.UseDevMode(*debug)))
	log := logging.NewLogrLogger(zl.WithName("provider-knative-lambda"))
	// controller-runtime is very chatty at info level; only debug gets it.
	// A logger without a sink costs nothing, where one that writes to
	// io.Discard still encodes every reconcile's values. controller-runtime
	// keeps the first logger it is given, so it is given one.
	crl := logr.Discard()
	if *debug {
		crl = zl
	}
	ctrl.SetLogger(crl)

	cfg, err := ctrl.GetConfig()
	kingpin.FatalIfError(err, "Cannot get the API server's REST config")

	s, err := kinds.ManagerScheme()
	kingpin.FatalIfError(err, "Cannot build the scheme")

	leaseDuration, renewDeadline := 60*time.Second, 50*time.Second
	writes := clients.NewWrites(clients.DefaultWriteWait)
	mgr, err := ctrl.NewManager(ratelimiter.LimitRESTConfig(cfg, *maxReconcileRate), ctrl.Options{
		Scheme:                     s,
		NewClient:                  clients.ManagerClient(writes),
		Client:                     clients.ClientOptions(),
		Cache:                      withSync(clients.ManagerCacheOptions(), *syncInterval),
		Metrics:                    metricsserver.Options{BindAddress: *metricsAddr, ExtraHandlers: profiles(*profile)},
		HealthProbeBindAddress:     *healthAddr,
		LeaderElection:             *leaderElection,
		LeaderElectionID:           "crossplane-leader-election-provider-knative-lambda",
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaseDuration:              &leaseDuration,
		RenewDeadline:              &renewDeadline,
	})
	kingpin.FatalIfError(err, "Cannot create the controller manager")
	kingpin.FatalIfError(mgr.AddHealthzCheck("ping", healthz.Ping), "Cannot add the health check")
	kingpin.FatalIfError(mgr.AddReadyzCheck("ping", healthz.Ping), "Cannot add the readiness check")

	sm := statemetrics.NewMRStateMetrics()
	metrics.Registry.MustRegister(sm)

	o := controller.Options{
		Logger:                  log,
		MaxConcurrentReconciles: *maxReconcileRate,
		PollInterval:            *pollInterval,
		GlobalRateLimiter:       ratelimiter.NewGlobal(*maxReconcileRate),
		Features:                &feature.Flags{},
		// The workload controllers record the managed resource metrics
		// crossplane-runtime's MRMetrics would, themselves.
		MetricOptions: &controller.MetricOptions{MRStateMetrics: sm},
		Gate:          new(gate.Gate[schema.GroupVersionKind]),
	}

	kingpin.FatalIfError(customresourcesgate.Setup(mgr, o), "Cannot set up the CRD gate")
	deps := workload.DefaultDependencies(mgr, writes, deny, allowTargets, log)
	deps.Polls = workload.NewPolls(*pollInterval, *maxReconcileRate, *maxPollShare)
	kingpin.FatalIfError(lambdacontroller.SetupGated(mgr, o, deps), "Cannot set up the controllers")
	log.Info("Starting", "sync", syncInterval.String(), "poll", pollInterval.String(), "max-poll-share", *maxPollShare, "max-reconcile-rate", *maxReconcileRate)
	kingpin.FatalIfError(mgr.Start(ctrl.SetupSignalHandler()), "Cannot start the controller manager")
}

// withSync sets how often a cache resyncs every object.
func withSync(o cache.Options, sync time.Duration) cache.Options {
	o.SyncPeriod = &sync
	return o
}

// profiles are pprof's handlers when profiling is on.
func profiles(on bool) map[string]http.Handler {
	if !on {
		return nil
	}
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
