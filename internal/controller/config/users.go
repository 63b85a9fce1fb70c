package config

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/usage"
)

const (
	// inUse is the finalizer crossplane-runtime's provider config
	// reconciler keeps on a config, and takes off once nothing uses it.
	inUse    = "in-use.crossplane.io"
	msgInUse = "Blocking deletion while usages still exist"

	reasonAccount event.Reason = "UsageAccounting"

	errGetPC        = "cannot get provider config"
	errCountUsers   = "cannot count provider config users"
	errDeleteStale  = "cannot delete a provider config usage that no resource controls"
	errUpdate       = "cannot update provider config"
	errUpdateStatus = "cannot update provider config status"
)

// A UsersFn counts the resources that use a config, and names its usages
// that no resource controls.
type UsersFn func(ctx context.Context, cfg usage.Config) (int64, []types.NamespacedName, error)

// A counter does what crossplane-runtime's provider config reconciler
// does, with users counted from the record of usages (see usage.Usages)
// where it lists and copies every usage of the config: it keeps a config
// in use from being deleted, says how many resources use it, and deletes
// its usages that no resource controls, which the resource recreates.
type counter struct {
	client    client.Client
	users     UsersFn
	kind      string
	newConfig func() resource.ProviderConfig
	log       logging.Logger
	record    event.Recorder
}

// Reconcile counts a provider config's users.
func (r *counter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pc := r.newConfig()
	if err := r.client.Get(ctx, req.NamespacedName, pc); err != nil {
		return reconcile.Result{}, errors.Wrap(resource.IgnoreNotFound(err), errGetPC)
	}
	users, stale, err := r.users(ctx, usage.Config{Namespace: pc.GetNamespace(), Kind: r.kind, Name: pc.GetName()})
	if err != nil {
		return reconcile.Result{}, errors.Wrap(err, errCountUsers)
	}
	for _, nn := range stale {
		u := &v1alpha1.ProviderConfigUsage{}
		u.SetNamespace(nn.Namespace)
		u.SetName(nn.Name)
		if err := r.client.Delete(ctx, u); resource.IgnoreNotFound(err) != nil {
			r.record.Event(pc, event.Warning(reasonAccount, errors.Wrap(err, errDeleteStale)))
			return reconcile.Result{}, errors.Wrap(err, errDeleteStale)
		}
	}
	r.log.Debug("Counted users", "config", req.String(), "users", users)
	if meta.WasDeleted(pc) {
		if users > 0 {
			r.record.Event(pc, event.Warning(reasonAccount, errors.New(msgInUse)))
			pc.SetUsers(users)
			pc.SetConditions(providerconfig.Terminating().WithMessage(msgInUse))
			return reconcile.Result{}, errors.Wrap(r.client.Status().Update(ctx, pc), errUpdateStatus)
		}
		meta.RemoveFinalizer(pc, inUse)
		return reconcile.Result{}, errors.Wrap(r.client.Update(ctx, pc), errUpdate)
	}
	if !meta.FinalizerExists(pc, inUse) {
		meta.AddFinalizer(pc, inUse)
		if err := r.client.Update(ctx, pc); err != nil {
			return reconcile.Result{}, errors.Wrap(err, errUpdate)
		}
	}
	if pc.GetUsers() == users {
		return reconcile.Result{}, nil
	}
	pc.SetUsers(users)
	return reconcile.Result{}, errors.Wrap(r.client.Status().Update(ctx, pc), errUpdateStatus)
}
