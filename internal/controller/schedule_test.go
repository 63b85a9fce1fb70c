package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestSchedules checks a function's schedules against a real API server,
// with Knative's PingSource reconciler played: one PingSource each, sending
// to the function's Service, Ready only once its sink resolved; a schedule
// Knative would refuse is refused without touching the running one; a
// removed schedule's PingSource goes.
func TestSchedules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "schedules", keep)
	fn := newImageFunction(ns, "reports")
	fn.Spec.ForProvider.Eventing = &v1alpha1.FunctionEventing{Schedules: []v1alpha1.Schedule{{
		Name: "nightly", Schedule: "30 2 * * *", TimeZone: ptr("Europe/Berlin"),
		Data: &runtime.RawExtension{Raw: []byte(`{"report":"orders"}`)},
	}}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	name := render.ScheduleName("reports", "nightly")
	ping := &sourcesv1.PingSource{}
	wait.Until(ctx, t, "the schedule's PingSource sends to the function's Service", func() string {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ping); err != nil {
			return err.Error()
		}
		s := ping.Spec
		if s.Sink.Ref == nil || s.Sink.Ref.Kind != "Service" || s.Sink.Ref.Name != "reports" || s.Schedule != "30 2 * * *" || s.Timezone != "Europe/Berlin" || s.Data != `{"report":"orders"}` {
			return fmt.Sprintf("spec %+v", s)
		}
		return ""
	})

	svc := &servingv1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reports"}, svc); err != nil {
		t.Fatal(err)
	}
	playact.MarkServiceReady(ctx, t, c, svc)
	// The function is Ready once its PingSource found the Service.
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	mg := &v1alpha1.LambdaFunction{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
		t.Fatal(err)
	}
	if got := mg.Status.AtProvider.Eventing; got == nil || len(got.Schedules) != 1 || got.Schedules[0] != name {
		t.Errorf("status.atProvider.eventing names the schedules %+v; want [%s]", got, name)
	}

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Eventing.Schedules[0].Schedule = "0 22-6 * * *"
	})
	// A schedule Knative refuses is named.
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonInvalid, "beginning of range (22) beyond end of range (6)")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ping); err != nil || ping.Spec.Schedule != "30 2 * * *" {
		t.Errorf("the refused schedule changed the running PingSource: %v, schedule %q", err, ping.Spec.Schedule)
	}

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Eventing.Schedules = nil
	})
	wait.Until(ctx, t, "the removed schedule's PingSource is gone", func() string {
		l := &sourcesv1.PingSourceList{}
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		if len(l.Items) != 0 {
			return fmt.Sprintf("%d PingSources", len(l.Items))
		}
		return ""
	})
	// The function is Ready without schedules.
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
}
