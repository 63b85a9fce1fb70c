package controller_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// BenchmarkConverge creates N image-source LambdaFunctions, plays Knative by
// marking each Service Ready as it appears, and reports how long until all
// are Ready, the provider's mean reconcile time, and the heap it holds. Run
// it once per size: go test -run '^$' -bench Converge -benchtime 1x.
func BenchmarkConverge(b *testing.B) {
	for _, n := range []int{200} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				converge(b, n)
			}
		})
	}
}

func converge(b *testing.B, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, b, "scale", keep)
	countBefore, sumBefore := reconcileTime(b)
	start := time.Now()
	tag := v1alpha1.ImageTag("v1")
	for i := range n {
		fn := &v1alpha1.LambdaFunction{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("fn-%04d", i)},
			Spec: v1alpha1.LambdaFunctionSpec{
				ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}},
				ForProvider:         v1alpha1.LambdaFunctionParameters{Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: &tag}}},
			},
		}
		if err := c.Create(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
	var allServices time.Duration
	wait.Until(ctx, b, fmt.Sprintf("%d functions Ready", n), func() string {
		svcs := &servingv1.ServiceList{}
		if err := c.List(ctx, svcs, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		if len(svcs.Items) == n && allServices == 0 {
			allServices = time.Since(start)
		}
		for i := range svcs.Items {
			if svcs.Items[i].Status.GetCondition(apis.ConditionReady) == nil {
				playact.MarkServiceReady(ctx, b, c, &svcs.Items[i])
			}
		}
		mgs := &lists.LambdaFunctionList{}
		if err := c.List(ctx, mgs, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		ready := 0
		for _, mg := range mgs.Items {
			if mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
				ready++
			}
		}
		if ready < n {
			return fmt.Sprintf("%d of %d Ready", ready, n)
		}
		return ""
	})
	allReady := time.Since(start)
	count, sum := reconcileTime(b)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(allServices.Seconds(), "s-all-services")
	b.ReportMetric(allReady.Seconds(), "s-all-ready")
	b.ReportMetric((sum-sumBefore)/(count-countBefore)*1000, "ms/reconcile")
	b.ReportMetric(count-countBefore, "reconciles")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap")
}

// reconcileTime is the count and sum of controller-runtime's reconcile time
// histogram for the LambdaFunction controller.
func reconcileTime(b *testing.B) (count, sum float64) {
	b.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "managed/lambdafunction.lambda.m.crossplane.io" {
					count += float64(m.GetHistogram().GetSampleCount())
					sum += m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return count, sum
}
