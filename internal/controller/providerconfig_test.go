package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestProviderConfigCountsUsers checks that a provider config counts the
// resources that use it as their usages come and go, and is kept from
// deletion while any does: its users are counted a moment after a burst of
// usages, not once per usage.
func TestProviderConfigCountsUsers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := startProvider(t, providerOptions{})
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "users-", "")
	newProviderConfig(ctx, t, c, ns)
	pc := &v1alpha1.ProviderConfig{}
	users := func(want int64) func() string {
		return func() string {
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pc); err != nil {
				return err.Error()
			}
			if pc.Status.Users != want || !slices.Contains(pc.GetFinalizers(), "in-use.crossplane.io") {
				return fmt.Sprintf("%d users, finalizers %v; want %d and in-use.crossplane.io", pc.Status.Users, pc.GetFinalizers(), want)
			}
			return ""
		}
	}
	fns := []*v1alpha1.LambdaFunction{testkit.ImageFunction(ns, "one"), testkit.ImageFunction(ns, "two"), testkit.ImageFunction(ns, "three")}
	for _, fn := range fns {
		if err := c.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(ctx, t, "the provider config counts three users", users(3))

	if err := c.Delete(ctx, fns[0]); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the deleted function is gone", func() string { return gone(ctx, c, fns[0]) })
	// The garbage collector, which does not run here, then deletes its
	// usage: the resource is the usage's controller.
	usages := &v1alpha1.ProviderConfigUsageList{}
	if err := c.List(ctx, usages, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range usages.Items {
		if u := &usages.Items[i]; u.ResourceReference.Name == fns[0].Name {
			if err := c.Delete(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	wait.Until(ctx, t, "the provider config counts two users", users(2))
}
