// Command kingress is the local cluster's Knative networking layer (see
// package kingress): a Deployment in knative-serving that serves every
// Ingress of its class on a public and a private port.
package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"knative.dev/networking/pkg/apis/networking/v1alpha1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/kingress"
)

func main() {
	var (
		app         = kingpin.New("kingress", "Serve Knative Ingresses of class "+kingress.Class+".")
		public      = app.Flag("public-address", "host:port serving ExternalIP rules.").Default(":8080").String()
		private     = app.Flag("private-address", "host:port serving every rule.").Default(":8081").String()
		health      = app.Flag("health-address", "host:port of /healthz and /readyz.").Default(":8082").String()
		publicName  = app.Flag("public-name", "In-cluster name of the public Service.").Required().String()
		privateName = app.Flag("private-name", "In-cluster name of the private Service.").Required().String()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	ctrl.SetLogger(zap.New())
	kingpin.FatalIfError(run(ctrl.SetupSignalHandler(), *public, *private, *health, *publicName, *privateName), "kingress")
}

const (
	errScheme   = "cannot register Knative's networking kinds"
	errManager  = "cannot create the controller manager"
	errChecks   = "cannot add the health checks"
	errSetup    = "cannot set up the Ingress controller"
	errFmtServe = "cannot serve %s"
)

func run(ctx context.Context, public, private, health, publicName, privateName string) error {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		return errors.Wrap(err, errScheme)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 s,
		HealthProbeBindAddress: health,
		Metrics:                server.Options{BindAddress: "0"},
	})
	if err != nil {
		return errors.Wrap(err, errManager)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return errors.Wrap(err, errChecks)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return errors.Wrap(err, errChecks)
	}
	// Every backend is a Service in the cluster: no proxy from the
	// environment, and connections kept for the next request.
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
	}
	pub, priv := kingress.NewProxy(false, transport), kingress.NewProxy(true, transport)
	r := &kingress.Reconciler{Client: mgr.GetClient(), Proxies: []*kingress.Proxy{pub, priv}, Public: publicName, Private: privateName}
	if err := r.SetupWithManager(mgr); err != nil {
		return errors.Wrap(err, errSetup)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return mgr.Start(ctx) })
	for addr, h := range map[string]http.Handler{public: pub, private: priv} {
		srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
		g.Go(func() error {
			<-ctx.Done()
			return srv.Close()
		})
		g.Go(func() error {
			if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				return errors.Wrapf(err, errFmtServe, srv.Addr)
			}
			return nil
		})
	}
	return g.Wait()
}
