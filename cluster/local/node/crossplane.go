package node

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// CrossplaneNamespace is where the chart installs Crossplane, and the
// package manager the packages' pods.
const CrossplaneNamespace = "crossplane-system"

// What make crossplane-core builds, in BinDir: Crossplane's image (its
// binary, CRDs and webhook configurations, as Crossplane's own image holds
// them) and the program that renders its Helm chart.
const (
	crossplaneImage = "crossplane-core.tar"
	crossplaneRepo  = "registry.local/crossplane/crossplane"
	binChart        = "crossplane-chart"
)

// circuitBreakerBurst is what the node sets Crossplane's XR circuit
// breaker's burst to, as the README advises platforms to. At the default,
// 100, one Lambda's first rollout opened it (its own status writes, which
// Crossplane v2.4.0 flaps a few times after each change, crossplane#7062,
// and its Knative objects' count), and an edit made within the cooldown was
// dropped: its build started 60 s after it, at the function's next call.
// At 1000 the flapping ended by itself, three flips on, and an edit right
// after the rollout started its build within a second.
const circuitBreakerBurst = "1000"

// crossplaneCPU is what the chart's core and RBAC manager each request,
// which the node lightens as it does Knative's.
const crossplaneCPU = "100m"

// crossplaneChart is Crossplane's Helm chart, from the release the image is
// built from.
var crossplaneChart = local.CRDSource{Module: local.CrossplaneCRDs.Module, Version: local.CrossplaneVersion, Dir: "cluster/charts/crossplane"}

const (
	errFmtChart     = "cannot render Crossplane's Helm chart: %s"
	errCrossplane   = "cannot install Crossplane"
	errCrossplaneNS = "cannot create Crossplane's namespace"
)

// InstallCrossplane installs Crossplane core and its RBAC manager as
// Crossplane's Helm chart does, with the chart's defaults but the image,
// the circuit breaker's burst and lighter CPU requests:
// the chart is rendered by Helm's own template engine, so the cluster runs
// the Deployments, service accounts and RBAC users run. It waits until both
// are available; core's init container has then installed Crossplane's
// CRDs.
func (c *Cluster) InstallCrossplane(ctx context.Context, bin string) error {
	if err := c.importImage(ctx, filepath.Join(bin, crossplaneImage)); err != nil {
		return err
	}
	root, err := local.ModuleRoot(ctx, ".")
	if err != nil {
		return err
	}
	chart, err := crossplaneChart.Path(ctx, root)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	render := exec.CommandContext(ctx, filepath.Join(bin, binChart), "--chart="+chart, "--namespace="+CrossplaneNamespace,
		"--set=image.repository="+crossplaneRepo, "--set=image.tag="+local.CrossplaneVersion,
		"--set=args={--circuit-breaker-burst="+circuitBreakerBurst+"}",
		"--set=resourcesCrossplane.requests.cpu="+lighter(crossplaneCPU), "--set=resourcesRBACManager.requests.cpu="+lighter(crossplaneCPU))
	render.Stderr = &stderr
	out, err := render.Output()
	if err != nil {
		return errors.Wrapf(err, errFmtChart, strings.TrimSpace(stderr.String()))
	}
	objs, err := manifest.Decode(out, "Crossplane's chart")
	if err != nil {
		return errors.Wrap(err, errCrossplane)
	}
	// Helm's --create-namespace.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CrossplaneNamespace}}
	if err := client.IgnoreAlreadyExists(c.kube.Create(ctx, ns)); err != nil {
		return errors.Wrap(err, errCrossplaneNS)
	}
	if err := local.Apply(ctx, c.Config, objs); err != nil {
		return errors.Wrap(err, errCrossplane)
	}
	for _, d := range []string{"crossplane", "crossplane-rbac-manager"} {
		if err := c.available(ctx, d, client.ObjectKey{Namespace: CrossplaneNamespace, Name: d}); err != nil {
			return err
		}
	}
	return nil
}
