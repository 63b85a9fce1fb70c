package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestResourceTimesFollowAFunction takes a function through its life with
// the provider's metrics on, as cmd/provider runs it, and checks that each
// of crossplane-runtime's four managed resource histograms took a sample
// where it should: its first reconcile, its first Ready, a drift reverted,
// its deletion. Tests run one at a time, so only this one's function adds
// samples meanwhile.
func TestResourceTimesFollowAFunction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startProvider(t, providerOptions{stateMetrics: statemetrics.NewMRStateMetrics()})
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "times-", "")
	newProviderConfig(ctx, t, c, ns)
	before := histogramCounts(t)
	took := func(name string) func() string {
		return func() string {
			if got := histogramCounts(t)[name]; got <= before[name] {
				return fmt.Sprintf("%s took %d samples, as many as before", name, got)
			}
			return ""
		}
	}

	fn := testkit.ImageFunction(ns, "hello")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the first reconcile is observed", took("crossplane_managed_resource_first_time_to_reconcile_seconds"))
	svc := serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), "the function's Service exists", anyService)
	playact.MarkServiceReady(ctx, t, c, svc)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	wait.Until(ctx, t, "the first Ready is observed", took("crossplane_managed_resource_first_time_to_readiness_seconds"))

	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Template.Spec.Containers[0].Image = "ghcr.io/acme/someone-else:v9"
	if err := c.Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the reverted drift is observed", took("crossplane_managed_resource_drift_seconds"))

	if err := c.Delete(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the deletion is observed", took("crossplane_managed_resource_deletion_seconds"))
}

// histogramCounts are the sample counts of the provider's histograms for
// LambdaFunctions, by name.
func histogramCounts(t *testing.T) map[string]uint64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gvk := v1alpha1.LambdaFunctionGroupVersionKind.String()
	counts := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "gvk" && l.GetValue() == gvk && m.GetHistogram() != nil {
					counts[f.GetName()] += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return counts
}
