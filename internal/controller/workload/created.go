package workload

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// Creates are the resources whose last create applied an object that will
// wake them (see deployer.wokenBy), each with the interval its next poll is
// due after, before Polls spread it.
type creates struct {
	*notes[time.Duration]
	// poll is the managed reconciler's poll interval and the resource's own
	// hook on it.
	poll func(mg resource.Managed) time.Duration
}

func newCreates(interval time.Duration, hook func(resource.Managed, time.Duration) time.Duration) *creates {
	return &creates{
		notes: newNotes[time.Duration](),
		poll: func(mg resource.Managed) time.Duration {
			// As the managed reconciler reads it: a resource may set its own.
			if d, ok := meta.GetPollInterval(mg); ok {
				return hook(mg, d)
			}
			return hook(mg, interval)
		},
	}
}

// created notes that the resource's create applied an object that will
// wake it.
func (c *creates) created(mg resource.Managed) {
	c.add(client.ObjectKeyFromObject(mg), c.poll(mg))
}

// A createdReconciler drops the immediate requeue crossplane-runtime's
// managed reconciler asks for after every create, when what the create
// applied will wake the resource anyway. That requeue finds the objects
// just applied and their status not yet written, and in a rush it cost each
// new resource a second token of the reconcile rate: at 2,000 functions and
// 100 a second, half of the time until every Service existed. The resource
// waits for its next poll instead, should the wake never come.
type createdReconciler struct {
	inner   reconcile.Reconciler
	creates *creates
	// spread is how long a resource waits for a poll due after an
	// interval, with the polls of all resources spread (Polls.Interval).
	spread func(time.Duration) time.Duration
	// spare, when set, puts off that poll while it comes early for the
	// resources there are by then.
	spare *spare
}

// Reconcile runs the inner reconcile, and turns its requeue after a noted
// create into the next poll. A failed status update after the create keeps
// its error, and its backoff.
func (c *createdReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := c.inner.Reconcile(ctx, req)
	poll, created := c.creates.take(req.NamespacedName)
	//nolint:staticcheck // Requeue is what the managed reconciler returns after a create.
	if created && err == nil && res.Requeue && res.RequeueAfter == 0 {
		c.spare.awaits(req.NamespacedName, poll)
		return reconcile.Result{RequeueAfter: c.spread(poll)}, nil
	}
	return res, err
}
