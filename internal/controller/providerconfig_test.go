package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestProviderConfigCountsUsers checks that a provider config counts the
// resources that use it as their usages come and go, counted a moment
// after a burst of usages rather than once per usage, and that it stays
// while in use when deleted.
func TestProviderConfigCountsUsers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "users", keep)
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
	// retire deletes functions and then, as the garbage collector would
	// (it does not run here), their usages, which they control.
	retire := func(fns ...*v1alpha1.LambdaFunction) {
		for _, fn := range fns {
			if err := c.Delete(ctx, fn); err != nil {
				t.Fatal(err)
			}
			wait.Until(ctx, t, "the deleted function is gone", func() string { return gone(ctx, c, fn) })
		}
		usages := &lists.ProviderConfigUsageList{}
		if err := c.List(ctx, usages, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for i := range usages.Items {
			u := &usages.Items[i]
			if !slices.ContainsFunc(fns, func(fn *v1alpha1.LambdaFunction) bool { return fn.Name == u.ResourceReference.Name }) {
				continue
			}
			if err := c.Delete(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}

	fns := []*v1alpha1.LambdaFunction{testkit.ImageFunction(ns, "one"), testkit.ImageFunction(ns, "two"), testkit.ImageFunction(ns, "three")}
	for _, fn := range fns {
		if err := c.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(ctx, t, "the provider config counts three users", users(3))

	retire(fns[0])
	wait.Until(ctx, t, "the provider config counts two users", users(2))

	if err := c.Delete(ctx, pc); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the deletion waits for the users", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pc), pc); err != nil {
			return err.Error()
		}
		if cd := pc.GetCondition(providerconfig.TypeTerminating); cd.Status != corev1.ConditionTrue {
			return fmt.Sprintf("%s condition %q", providerconfig.TypeTerminating, cd.Status)
		}
		return ""
	})
	retire(fns[1:]...)
	wait.Until(ctx, t, "the provider config is gone with its last user", func() string { return gone(ctx, c, pc) })
}

// TestUsageDeletedIsMadeAgain checks that the provider's record of usages
// follows the API server: a function whose usage was deleted by hand makes
// it again at its next reconcile, where a record that missed the deletion
// would say the usage is there and leave its config free to be deleted.
func TestUsageDeletedIsMadeAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "usage", keep)
	fn := testkit.ImageFunction(ns, "hello")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	usage := func() (*v1alpha1.ProviderConfigUsage, string) {
		l := &lists.ProviderConfigUsageList{}
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, err.Error()
		}
		if len(l.Items) != 1 {
			return nil, fmt.Sprintf("%d usages, want 1", len(l.Items))
		}
		return &l.Items[0], ""
	}
	var was *v1alpha1.ProviderConfigUsage
	wait.Until(ctx, t, "the function records its usage", func() (msg string) {
		was, msg = usage()
		return msg
	})
	if err := c.Delete(ctx, was); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the usage is gone", func() string {
		if u, _ := usage(); u != nil && u.UID == was.UID {
			return "the deleted usage is still listed"
		}
		return ""
	})
	// A new label is a change of the function's desired state: it is
	// reconciled at once, not at its next poll.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(f *v1alpha1.LambdaFunction) {
		f.SetLabels(map[string]string{"touched": "yes"})
	})
	wait.Until(ctx, t, "the function records its usage again", func() string {
		u, msg := usage()
		if u == nil {
			return msg
		}
		if u.UID == was.UID {
			return "the deleted usage is still listed"
		}
		if u.ResourceReference.Name != fn.Name || u.ProviderConfigReference.Name != "default" {
			return fmt.Sprintf("usage of %s by %s, want of default by %s", u.ProviderConfigReference.Name, u.ResourceReference.Name, fn.Name)
		}
		return ""
	})
}
