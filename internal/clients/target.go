package clients

import (
	"context"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

const (
	errRunTargetCache = "cannot run the target cluster's cache"
	errHTTPClient     = "cannot make an HTTP client for the target cluster"
	errReach          = "cannot reach the target cluster's API server"
)

// A Manager is the part of a controller manager target clients follow: its
// request rate.
type Manager interface {
	GetConfig() *rest.Config
}

// TargetClients makes clients for remote target clusters that work as the
// manager's own does for the provider's cluster. Reads come from informers,
// so a steady-state reconcile lists nothing; they run until the Cache that
// asked for them stops them. Requests are limited to the manager's rate, not
// client-go's default of 5 per second. A cluster that cannot be reached, or
// whose address the dialer refuses, is an error at once, not informers that
// retry in the background while every read waits.
// The informers of owned kinds are followed as FollowOwned says. A cache
// that stops on an error says so in log: controller-runtime's own logger
// writes nothing without --debug.
func TargetClients(mgr Manager, owned Owned, log logging.Logger) NewClientFn {
	return func(ctx context.Context, cfg *rest.Config) (Target, error) {
		s, err := kinds.TargetScheme()
		if err != nil {
			return Target{}, err
		}
		cfg.QPS, cfg.Burst = mgr.GetConfig().QPS, mgr.GetConfig().Burst
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return Target{}, errors.Wrap(err, errHTTPClient)
		}
		dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
		if err != nil {
			return Target{}, errors.Wrap(err, errHTTPClient)
		}
		if _, err := dc.ServerVersion(); err != nil {
			return Target{}, errors.Wrap(err, errReach)
		}
		c, err := cluster.New(cfg, func(o *cluster.Options) {
			o.HTTPClient = hc
			o.Scheme = s
			o.Cache = TargetCacheOptions()
			o.Client = ClientOptions()
		})
		if err != nil {
			return Target{}, err
		}
		followed := FollowOwned(ctx, c.GetCache(), owned)
		go func() {
			if err := c.Start(ctx); err != nil {
				log.Info(errRunTargetCache, "host", cfg.Host, "error", err)
			}
		}()
		return Target{Client: c.GetClient(), Uncached: c.GetAPIReader(), Followed: followed}, nil
	}
}
