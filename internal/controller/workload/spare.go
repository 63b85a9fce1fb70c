package workload

import (
	"context"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// spareRetries is how many times at most a put-off poll looks for a spare
// token again within a poll interval. Looking every second instead, a run
// of 10,000 functions took about 12 passes more a function until all were
// Ready.
const spareRetries = 10

// A spare lets a resource's poll take only the reconcile rate nothing else
// waits for. crossplane-runtime's global rate limiter hands out tokens in
// the order reconciles ask for them, and reserves ahead when none is left:
// in a rush of 10,000 new resources, the polls of the first ones came due
// inside it, each took a token a create needed, and the creates asking
// after them waited. A poll that finds no token to spare is put off,
// reserving none, until the tokens reserved ahead are spent; after one
// more poll interval it asks like any reconcile, so drift is still seen
// under a rate that never idles.
//
// A reconcile is a poll unless something changed for its resource since
// its last reconcile ran: its desired state, or one of its objects in a
// target cluster. Retries after an error count as polls too: they already
// wait out a backoff.
//
// A poll that comes early is put off too: one after a create, while the
// resource awaits the wake of what its create applied, was spread over the
// resources there were at the create. In a rush they are many more by the
// time it comes due: at 10,000 new functions, such polls cost 0.41
// reconciles and status writes a function more than at 2,000, each taking
// a token a wake needed (providerbench, docs/benchmarks.md).
type spare struct {
	limiter *rate.Limiter
	// poll is the provider's poll interval, and spread how long an
	// interval becomes with the polls of all resources spread
	// (Polls.Interval).
	poll   time.Duration
	spread func(time.Duration) time.Duration
	now    func() time.Time
	// changes are the resources something changed for since their last
	// reconcile ran.
	changes *notes[struct{}]
	// waiting are the resources whose poll is put off, with since when.
	waiting *notes[time.Time]
	// awaiting are the resources whose create applied what will wake them,
	// until their next reconcile runs.
	awaiting *notes[awaited]
}

// An awaited create is when a resource's create applied what will wake it,
// and the interval its next poll is due after, before it is spread.
type awaited struct {
	at   time.Time
	poll time.Duration
}

func newSpare(l *rate.Limiter, poll time.Duration, spread func(time.Duration) time.Duration) *spare {
	return &spare{
		limiter: l, poll: poll, spread: spread, now: time.Now,
		changes: newNotes[struct{}](), waiting: newNotes[time.Time](), awaiting: newNotes[awaited](),
	}
}

// interval is how long a resource waits between polls.
func (s *spare) interval() time.Duration { return s.spread(s.poll) }

// awaits notes that the resource's create applied, now, what will wake it,
// and that its next poll is due after poll, before it is spread. Without a
// spare nothing is noted.
func (s *spare) awaits(r types.NamespacedName, poll time.Duration) {
	if s != nil {
		s.awaiting.add(r, awaited{at: s.now(), poll: poll})
	}
}

// early is how long a poll of a resource that awaits its create's wake
// comes before the poll's interval, spread over the resources there are
// now, has passed since the create; 0 for any other resource.
func (s *spare) early(r types.NamespacedName, now time.Time) time.Duration {
	a, ok := s.awaiting.get(r)
	if !ok {
		return 0
	}
	return max(0, a.at.Add(s.spread(a.poll)).Sub(now))
}

// changed notes that something changed for the resource. Without a spare
// nothing is noted.
func (s *spare) changed(r reconcile.Request) {
	if s != nil {
		s.changes.add(r.NamespacedName, struct{}{})
	}
}

// filter is p, and notes each resource whose event it passes as changed.
// Without a spare it is p.
func (s *spare) filter(p predicate.Predicate) predicate.Predicate {
	if s == nil {
		return p
	}
	return predicate.And(p, s.noting())
}

// noting is a predicate that passes every event and notes its resource as
// changed; it goes after the predicates that filter what is a change.
func (s *spare) noting() predicate.Predicate {
	note := func(o client.Object) bool {
		s.changed(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		return true
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return note(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return note(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return note(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return note(e.Object) },
	}
}

// polls wraps the rate-limited reconcile: a poll that finds no token to
// spare is put off. Without a spare it is the rate-limited reconcile.
func (s *spare) polls(limited reconcile.Reconciler) reconcile.Reconciler {
	if s == nil {
		return limited
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if !s.changes.has(req.NamespacedName) {
			now := s.now()
			if wait := s.early(req.NamespacedName, now); wait > 0 {
				return reconcile.Result{RequeueAfter: wait}, nil
			}
			interval := s.interval()
			if wait := s.short(now, interval/spareRetries); wait > 0 && now.Sub(s.waiting.keep(req.NamespacedName, now)) < interval {
				pollsPutOff.Inc()
				return reconcile.Result{RequeueAfter: wait}, nil
			}
		}
		s.waiting.take(req.NamespacedName)
		return limited.Reconcile(ctx, req)
	})
}

// ran wraps the reconcile the rate limiter lets through: once it runs, what
// changed before is seen. A reconcile the rate limiter turns back keeps its
// change, so it is not put off as a poll when it comes back. Without a
// spare it is inner.
func (s *spare) ran(inner reconcile.Reconciler) reconcile.Reconciler {
	if s == nil {
		return inner
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		s.changes.take(req.NamespacedName)
		s.awaiting.take(req.NamespacedName)
		return inner.Reconcile(ctx, req)
	})
}

// short is 0 when a token is to spare now, or how long until the tokens
// reserved ahead are spent, but at least retry.
func (s *spare) short(now time.Time, retry time.Duration) time.Duration {
	tokens, limit := s.limiter.TokensAt(now), s.limiter.Limit()
	if tokens >= 1 || limit <= 0 || limit == rate.Inf {
		return 0
	}
	return max(retry, time.Duration((1-tokens)/float64(limit)*float64(time.Second)))
}
