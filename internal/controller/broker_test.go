package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
)

// TestSharedBroker checks that two functions that both create one Broker
// share it quietly, and that it goes only with its last user.
func TestSharedBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "shared", keep)
	tag := v1alpha1.ImageTag("v1")
	var fns []*v1alpha1.LambdaFunction
	for _, name := range []string{"first", "second"} {
		fn := &v1alpha1.LambdaFunction{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.LambdaFunctionSpec{
				ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}},
				ForProvider: v1alpha1.LambdaFunctionParameters{
					Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: &tag}},
					Eventing: &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{Name: "shared", Create: true}, Triggers: []v1alpha1.Trigger{{Name: "all"}}},
				},
			},
		}
		if err := c.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
		fns = append(fns, fn)
		svc := &servingv1.Service{}
		wait.Until(ctx, t, name+"'s Service", func() string {
			return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc))
		})
		playact.MarkServiceReady(ctx, t, c, svc)
	}
	for _, fn := range fns {
		wait.Until(ctx, t, fn.Name+" is Ready", func() string {
			mg := &v1alpha1.LambdaFunction{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
				return err.Error()
			}
			if r := mg.GetCondition(xpv2.TypeReady); r.Status != "True" {
				return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
			}
			return ""
		})
	}

	// Two users of one Broker do not take it from each other at rest.
	time.Sleep(2 * testPoll)
	before := p.writes.in(ns)
	time.Sleep(4 * testPoll)
	if n := p.writes.in(ns) - before; n != 0 {
		t.Errorf("two functions sharing a Broker made %d write requests at rest; want 0", n)
	}

	broker := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}}
	gone := func(o client.Object) func() string {
		return func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err == nil {
				return o.GetName() + " still exists"
			}
			return ""
		}
	}
	if err := c.Delete(ctx, fns[0]); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the first function is gone", gone(fns[0]))
	if err := c.Get(ctx, client.ObjectKeyFromObject(broker), broker); err != nil {
		t.Errorf("the Broker went with its first user, while the second still uses it: %v", err)
	}
	if err := c.Delete(ctx, fns[1]); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the Broker goes with its last user", gone(broker))
}
