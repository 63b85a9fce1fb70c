package clients

import (
	"context"
	"encoding/json"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"
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
	errNotKubernetes  = "the target cluster's /version is not a Kubernetes API server's version"
	errFmtStatus      = "the server answered HTTP %d"
	errNotSynced      = "the target cluster's API server did not answer the provider's lists before the attempt to connect ended"
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
// The informers of owned kinds are followed as FollowOwned says, and a client
// is returned once they are filled. A cache that stops on an error says so
// in log: controller-runtime's own logger writes nothing without --debug.
// Every request is bounded as a boundedTransport bounds it.
func TargetClients(mgr Manager, owned Owned, log logging.Logger) NewClientFn {
	return func(ctx, run context.Context, cfg *rest.Config) (Target, error) {
		s, err := kinds.TargetScheme()
		if err != nil {
			return Target{}, err
		}
		cfg.QPS, cfg.Burst = mgr.GetConfig().QPS, mgr.GetConfig().Burst
		cfg.Wrap(boundTargets(DefaultTargetRequestTimeout, DefaultTargetResponseBytes))
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return Target{}, errors.Wrap(err, errHTTPClient)
		}
		dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
		if err != nil {
			return Target{}, errors.Wrap(err, errHTTPClient)
		}
		if err := reach(ctx, dc.RESTClient()); err != nil {
			return Target{}, err
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
		followed := FollowOwned(run, c.GetCache(), owned)
		go func() {
			if err := c.Start(run); err != nil {
				log.Info(errRunTargetCache, "host", cfg.Host, "error", err)
			}
		}()
		if !c.GetCache().WaitForCacheSync(ctx) {
			return Target{}, errors.New(errNotSynced)
		}
		return Target{Client: c.GetClient(), Uncached: c.GetAPIReader(), Followed: followed}, nil
	}
}

// reach checks that a Kubernetes API server answers /version. What a server
// that is not one answered never reaches an error: a team's kubeconfig may
// name any address the dialer allows, and its error ends up in the team's
// conditions.
func reach(ctx context.Context, rc rest.Interface) error {
	raw, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	var status kerrors.APIStatus
	switch {
	case errors.As(err, &status):
		return errors.Wrap(errors.Errorf(errFmtStatus, status.Status().Code), errReach)
	case err != nil:
		return errors.Wrap(err, errReach)
	}
	v := version.Info{}
	if json.Unmarshal(raw, &v) != nil || v.GitVersion == "" {
		return errors.New(errNotKubernetes)
	}
	return nil
}
