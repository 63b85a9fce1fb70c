package clients

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const errRunTargetCache = "cannot run the target cluster's cache"

// TargetClients makes clients for remote target clusters that work as the
// manager's own does for the provider's cluster. Reads come from informers,
// so a steady-state reconcile lists nothing; the manager runs them and
// stops them with itself. Requests are limited to the manager's rate, not
// client-go's default of 5 per second.
func TargetClients(mgr manager.Manager) NewClientFn {
	return func(cfg *rest.Config) (client.Client, error) {
		s, err := TargetScheme()
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = mgr.GetConfig().QPS, mgr.GetConfig().Burst
		c, err := cluster.New(cfg, func(o *cluster.Options) {
			o.Scheme = s
			o.Cache = TargetCacheOptions()
			o.Client = ClientOptions()
		})
		if err != nil {
			return nil, err
		}
		// A manager that has started starts what is added at once.
		if err := mgr.Add(c); err != nil {
			return nil, errors.Wrap(err, errRunTargetCache)
		}
		return c.GetClient(), nil
	}
}
