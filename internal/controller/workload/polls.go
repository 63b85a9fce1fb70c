package workload

import (
	"context"
	"sync/atomic"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultPollShare is the share of the reconcile rate the polls of every
// resource may take together. The rest is kept for what cannot wait a
// poll: new resources, changed specs and wakes.
const DefaultPollShare = 0.5

// Polls spread the resources' polls so that together they take at most a
// share of the reconcile rate all controllers share. Without it, 10,000
// resources polled every 30 s ask for 333 reconciles a second: against a
// rate of 100, crossplane-runtime's limiter defers each poll with a token
// reserved ahead, and a new resource, or one woken because its Service
// became Ready, waits behind every poll already deferred. Each resource is
// then polled about every 100 s anyway; spread to 200 s, the polls leave
// half the rate free. Drift stays bounded, by the longer interval, and
// what wakes a resource (its objects' status, a deleted object, its own
// spec) does not wait for a poll.
type Polls struct {
	// poll is the interval when the share allows it.
	poll time.Duration
	// perSecond is how many polls a second the share allows; 0 for no
	// bound.
	perSecond float64
	// resources are how many resources the informers hold.
	resources atomic.Int64
}

// NewPolls bounds the polls of all resources, each due every poll, to share
// of rate reconciles a second. A share or rate of 0 leaves them unbounded.
func NewPolls(poll time.Duration, rate int, share float64) *Polls {
	pollInterval.Set(poll.Seconds())
	return &Polls{poll: poll, perSecond: float64(rate) * share}
}

// Interval is how long a resource waits for its next poll, which would be
// poll: longer when the resources polled that often would take more than
// their share.
func (p *Polls) Interval(poll time.Duration) time.Duration {
	if p == nil || p.perSecond <= 0 {
		return poll
	}
	return max(poll, time.Duration(float64(p.resources.Load())/p.perSecond*float64(time.Second)))
}

// count counts the resources of a kind as the cache's informer sees them
// come and go.
func (p *Polls) count(ctx context.Context, c cache.Informers, obj client.Object) error {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.add(1) },
		DeleteFunc: func(any) { p.add(-1) },
	})
	return err
}

// add counts n more resources.
func (p *Polls) add(n int64) {
	p.resources.Add(n)
	pollInterval.Set(p.Interval(p.poll).Seconds())
}
