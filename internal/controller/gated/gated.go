// Package gated sets controllers up once the API server serves their kinds.
package gated

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
)

// Waits of a gated setup before it asks again whether discovery serves its
// kinds: each question the mapper cannot answer asks discovery again, so
// the wait doubles, up to a minute.
const (
	firstWait = time.Second
	maxWait   = time.Minute
)

// A Mapper is what Register needs of a manager.
type Mapper interface {
	GetRESTMapper() meta.RESTMapper
}

// Register runs setup once the CRDs of gvks are Established, as Crossplane's
// CRD gate says, and the API server's discovery serves their kinds.
// Discovery can trail Established: a setup run in between could not make
// its informers, and the gate never opens twice, so the controller would
// never start. A setup that fails all the same is logged where the
// provider's log is always written.
func Register(m Mapper, o controller.Options, what string, setup func() error, gvks ...schema.GroupVersionKind) {
	o.Gate.Register(func() {
		for wait := firstWait; !served(m.GetRESTMapper(), gvks); wait = min(2*wait, maxWait) {
			o.Logger.Debug("Waiting for discovery to serve the controller's kinds", "controller", what)
			time.Sleep(wait)
		}
		if err := setup(); err != nil {
			o.Logger.Info("Cannot set up a controller", "controller", what, "error", err)
		}
	}, gvks...)
}

// served is whether mapper knows every kind of gvks. controller-runtime's
// mapper asks discovery again for a kind it does not know.
func served(mapper meta.RESTMapper, gvks []schema.GroupVersionKind) bool {
	for _, gvk := range gvks {
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return false
		}
	}
	return true
}
