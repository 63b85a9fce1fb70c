package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestStateMetricsFollowResources checks that Crossplane's managed resource
// state metrics count the functions that exist, are Ready and are Synced as
// they change, against what the API server lists: other tests' functions
// share it.
func TestStateMetricsFollowResources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sm := statemetrics.NewMRStateMetrics()
	p := startProvider(t, providerOptions{stateMetrics: sm})
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "states-", "")
	newProviderConfig(ctx, t, c, ns)
	l := prometheus.Labels{"gvk": v1alpha1.LambdaFunctionGroupVersionKind.String()}
	counted := func(ready int) func() string {
		return func() string {
			fns := &lists.LambdaFunctionList{}
			if err := c.List(ctx, fns); err != nil {
				return err.Error()
			}
			var want [3]float64
			for _, fn := range fns.Items {
				want[0]++
				want[1] += trueOf(fn.GetCondition(xpv2.TypeReady))
				want[2] += trueOf(fn.GetCondition(xpv2.TypeSynced))
			}
			got := [3]float64{testutil.ToFloat64(sm.Exists.With(l)), testutil.ToFloat64(sm.Ready.With(l)), testutil.ToFloat64(sm.Synced.With(l))}
			if got != want || want[1] < float64(ready) {
				return fmt.Sprintf("exists, Ready, Synced: %v; the API server lists %v (at least %d Ready expected)", got, want, ready)
			}
			return ""
		}
	}
	fns := []*v1alpha1.LambdaFunction{testkit.ImageFunction(ns, "one"), testkit.ImageFunction(ns, "two")}
	for _, fn := range fns {
		if err := c.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(ctx, t, "the new functions are counted", counted(0))

	svc := serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fns[0]), "the first function's Service exists", anyService)
	playact.MarkServiceReady(ctx, t, c, svc)
	wait.Until(ctx, t, "the Ready function is counted", counted(1))

	if err := c.Delete(ctx, fns[0]); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the deleted function is no longer counted", func() string {
		if msg := gone(ctx, c, fns[0]); msg != "" {
			return msg
		}
		return counted(0)()
	})
}

// trueOf is 1 for a true condition.
func trueOf(c xpv2.Condition) float64 {
	if c.Status == corev1.ConditionTrue {
		return 1
	}
	return 0
}
