// Package controller sets up every controller of the provider.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	"github.com/knative-lambda/provider-knative-lambda/internal/controller/config"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/workload"
)

// SetupGated adds every controller; each starts once its CRDs exist, so the
// provider can start before Crossplane (with safe-start) installs them. The
// managed resource controllers share deps, whose target clients stop with
// the manager.
func SetupGated(mgr ctrl.Manager, o controller.Options, deps workload.Dependencies) error {
	if err := mgr.Add(deps.Targets); err != nil {
		return err
	}
	workload.ObserveResources(mgr.GetCache())
	for _, setup := range []func(ctrl.Manager, controller.Options) error{
		func(m ctrl.Manager, o controller.Options) error {
			return config.SetupGated(m, o, deps.Usages)
		},
		func(m ctrl.Manager, o controller.Options) error {
			return workload.SetupGated(m, o, deps, workload.LambdaFunction)
		},
		func(m ctrl.Manager, o controller.Options) error {
			return workload.SetupGated(m, o, deps, workload.LambdaAgent)
		},
	} {
		if err := setup(mgr, o); err != nil {
			return err
		}
	}
	return nil
}
