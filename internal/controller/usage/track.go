package usage

import (
	"context"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A Tracker records the usages of provider configs as crossplane-runtime's
// tracker does, but asks the API server only of a usage that the record
// says is missing or names another config.
type Tracker struct {
	usages  *Usages
	tracker *resource.ProviderConfigUsageTracker
}

// NewTracker returns a tracker that writes usages with c, reads them with
// r, and keeps what it wrote in u.
func NewTracker(u *Usages, c client.Client, r client.Reader) *Tracker {
	return &Tracker{usages: u, tracker: resource.NewProviderConfigUsageTracker(recordedReads{Client: c, reader: r, usages: u}, &v1alpha1.ProviderConfigUsage{})}
}

// Track records that mg uses the provider config it names.
func (t *Tracker) Track(ctx context.Context, mg resource.ModernManaged) error {
	if err := t.usages.wait(ctx); err != nil {
		return err
	}
	ref := mg.GetProviderConfigReference()
	if ref == nil {
		// crossplane-runtime's tracker says what is missing.
		return t.tracker.Track(ctx, mg)
	}
	cfg := configOf(mg.GetNamespace(), *ref)
	name := string(mg.GetUID())
	if t.usages.names(name, cfg) {
		return nil
	}
	held := t.usages.holds(mg.GetNamespace(), name)
	if err := t.tracker.Track(ctx, mg); err != nil {
		return err
	}
	// A usage the record did not hold was created. The watch will say so
	// too; until it does, another reconcile of mg asks nothing again. One
	// it held, the watch tells of: crossplane-runtime's tracker leaves a
	// usage no resource controls as it is when it names the same config,
	// for the config's controller to delete.
	if !held {
		t.usages.put(mg.GetNamespace(), name, cfg, true)
	}
	return nil
}

// recordedReads is a client that reads a usage from the API server only if
// the record holds it: one it does not hold does not exist, as far as a
// watch can tell. A usage created since, by another writer, is refused as
// one that already exists, and the create is tried again.
type recordedReads struct {
	client.Client
	reader client.Reader
	usages *Usages
}

// Get reads a usage the record holds from the API server.
func (c recordedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !c.usages.holds(key.Namespace, key.Name) {
		return kerrors.NewNotFound(v1alpha1.SchemeGroupVersion.WithResource("providerconfigusages").GroupResource(), key.Name)
	}
	return c.reader.Get(ctx, key, obj, opts...)
}
