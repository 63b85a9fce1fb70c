// Package gated sets controllers up once the API server serves their kinds.
package gated

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
)

// servedPoll is how often a gated setup asks whether discovery serves its
// kinds yet.
const servedPoll = time.Second

// A Mapper is what Register needs of a manager.
type Mapper interface {
	GetRESTMapper() meta.RESTMapper
}

// Register runs setup once the CRDs of gvks are Established, as Crossplane's
// CRD gate says, and the API server's discovery serves their kinds.
// Discovery can trail Established: a setup run in between could not make
// its informers, and the gate never opens twice, so the controller would
// never start, as a LambdaFunction composed right after Crossplane activated
// its CRD once showed. A setup that fails all the same is logged where the
// provider's log is always written.
func Register(m Mapper, o controller.Options, what string, setup func() error, gvks ...schema.GroupVersionKind) {
	o.Gate.Register(func() {
		_ = wait.PollUntilContextCancel(context.Background(), servedPoll, true, func(context.Context) (bool, error) {
			return served(m.GetRESTMapper(), gvks), nil
		})
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
