package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/workload"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestPollsCountResources checks that the provider spreads its polls over
// the resources its informers see, functions and agents alike, as they
// come and go. Other tests' resources share the API server, so the count is
// compared with what the API server lists.
func TestPollsCountResources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One poll a second for all resources: an interval of 0 stretches to
	// as many seconds as there are resources.
	polls := workload.NewPolls(time.Second, 2, 0.5)
	p := startProvider(t, providerOptions{change: func(d *dependencies) { d.Polls = polls }})
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "polls-", "")
	newProviderConfig(ctx, t, c, ns)
	counted := func(least int) func() string {
		return func() string {
			fns, agents := &lists.LambdaFunctionList{}, &lists.LambdaAgentList{}
			if err := c.List(ctx, fns); err != nil {
				return err.Error()
			}
			if err := c.List(ctx, agents); err != nil {
				return err.Error()
			}
			n := len(fns.Items) + len(agents.Items)
			if got, want := polls.Interval(0), time.Duration(n)*time.Second; n < least || got != want {
				return fmt.Sprintf("%d resources listed (at least %d expected), polled every %s; want %s", n, least, got, want)
			}
			return ""
		}
	}
	objs := []client.Object{newImageFunction(ns, "one"), newImageFunction(ns, "two"), testkit.Agent(ns, "three", testkit.DefaultProviderConfig)}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(ctx, t, "the new resources are counted", counted(len(objs)))

	for _, o := range objs[1:] {
		if err := c.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(ctx, t, "the deleted resources are no longer counted", func() string {
		for _, o := range objs[1:] {
			if msg := gone(ctx, c, o); msg != "" {
				return msg
			}
		}
		return counted(1)()
	})
}
