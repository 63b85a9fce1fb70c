package workload

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestSparePolls(t *testing.T) {
	key := types.NamespacedName{Namespace: "team", Name: "hello"}
	t0 := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	const interval = 10 * time.Second
	ran := reconcile.Result{RequeueAfter: 30 * time.Second}
	cases := map[string]struct {
		reason string
		// reserved are the tokens taken or reserved at t0 from a bucket of
		// 1,000 filled at 100 a second.
		reserved int
		limit    rate.Limit
		changed  bool
		// waiting is since when the resource's poll is put off, if it is.
		waiting *time.Time
		// awaiting is the create whose wake the resource awaits, if any,
		// and spread how long its poll interval is with all resources'
		// spread by now.
		awaiting *awaited
		spread   func(time.Duration) time.Duration
		want     reconcile.Result
		wantRan  bool
		// wantWaiting is whether the poll is noted as put off for want of
		// a token to spare.
		wantWaiting bool
	}{
		"PollWithTokenToSpare": {
			reason:   "A poll that finds a token to spare runs.",
			reserved: 999, limit: 100, want: ran, wantRan: true,
		},
		"PollPutOff": {
			reason:   "A poll that finds 500 tokens reserved ahead waits until they are spent, reserving none.",
			reserved: 1500, limit: 100, wantWaiting: true, want: reconcile.Result{RequeueAfter: 5010 * time.Millisecond},
		},
		"PollPutOffBriefly": {
			reason:   "A poll short of less than a token waits a tenth of its interval before it looks again.",
			reserved: 1000, limit: 100, wantWaiting: true, want: reconcile.Result{RequeueAfter: interval / spareRetries},
		},
		"ChangeUnderLoad": {
			reason:   "A resource that changed since its last reconcile asks the rate limiter like any reconcile, however short the tokens.",
			reserved: 1500, limit: 100, changed: true, want: ran, wantRan: true,
		},
		"PollPutOffAnInterval": {
			reason:   "A poll put off for a whole poll interval asks the rate limiter like any reconcile, so drift is still seen under a rate that never idles.",
			reserved: 1500, limit: 100, waiting: new(t0.Add(-interval)), want: ran, wantRan: true,
		},
		"PollPutOffLessThanAnInterval": {
			reason:   "A poll put off for less than an interval is put off again.",
			reserved: 1500, limit: 100, waiting: new(t0.Add(-interval + time.Second)), wantWaiting: true, want: reconcile.Result{RequeueAfter: 5010 * time.Millisecond},
		},
		"PollEarlyAfterCreate": {
			reason: "A poll after a create, spread over the resources there were then, is put off until its interval spread over the resources there are now has passed, tokens to spare or not.",
			limit:  100, awaiting: &awaited{at: t0.Add(-30 * time.Second), poll: 30 * time.Second}, spread: four,
			want: reconcile.Result{RequeueAfter: 90 * time.Second},
		},
		"PollDueAfterCreate": {
			reason: "A poll after a create whose spread interval has passed runs.",
			limit:  100, awaiting: &awaited{at: t0.Add(-120 * time.Second), poll: 30 * time.Second}, spread: four,
			want: ran, wantRan: true,
		},
		"WakeAfterCreate": {
			reason: "The wake a create awaits is a change, and is never put off.",
			limit:  100, awaiting: &awaited{at: t0.Add(-time.Second), poll: 30 * time.Second}, spread: four, changed: true,
			want: ran, wantRan: true,
		},
		"UnlimitedRate": {
			reason: "Without a rate limit every poll runs.",
			limit:  rate.Inf, want: ran, wantRan: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := rate.NewLimiter(tc.limit, 1000)
			for n := tc.reserved; n > 0; n -= l.Burst() {
				l.ReserveN(t0, min(n, l.Burst()))
			}
			spread := same
			if tc.spread != nil {
				spread = tc.spread
			}
			s := newSpare(l, interval, spread)
			s.now = func() time.Time { return t0 }
			if tc.awaiting != nil {
				s.awaiting.add(key, *tc.awaiting)
			}
			if tc.changed {
				s.changed(reconcile.Request{NamespacedName: key})
			}
			if tc.waiting != nil {
				s.waiting.add(key, *tc.waiting)
			}
			gotRan := false
			r := s.polls(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				gotRan = true
				return ran, nil
			}))
			got, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nReconcile(...): -want result, +got result:\n%s", tc.reason, diff)
			}
			if gotRan != tc.wantRan {
				t.Errorf("%s\nReconcile(...): the rate-limited reconcile ran: %t, want %t", tc.reason, gotRan, tc.wantRan)
			}
			if _, waiting := s.waiting.take(key); waiting != tc.wantWaiting {
				t.Errorf("%s\nReconcile(...): the poll is noted as put off for want of a token: %t, want %t", tc.reason, waiting, tc.wantWaiting)
			}
		})
	}
}

// same is an interval spread over as few resources as it allows.
func same(d time.Duration) time.Duration { return d }

// four is an interval spread over four times as many resources as it allows.
func four(d time.Duration) time.Duration { return 4 * d }

func TestSpareRan(t *testing.T) {
	key := types.NamespacedName{Namespace: "team", Name: "hello"}
	s := newSpare(rate.NewLimiter(100, 1000), time.Minute, same)
	s.changed(reconcile.Request{NamespacedName: key})
	s.awaits(key, time.Minute)
	limited := true
	// As crossplane-runtime's rate limiter: the first pass is turned back.
	r := s.polls(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if limited {
			limited = false
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		return s.ran(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		})).Reconcile(ctx, req)
	}))
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if !s.changes.has(key) {
		t.Errorf("Reconcile(...): a change turned back by the rate limiter is no longer noted; it would be put off as a poll when it comes back")
	}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if s.changes.has(key) {
		t.Errorf("Reconcile(...): a change is still noted after its reconcile ran; the next poll would not be one")
	}
	if s.awaiting.has(key) {
		t.Errorf("Reconcile(...): a create's wake is still awaited after the next reconcile ran; its later polls would be put off as if they came after the create")
	}
}

func TestSpareNoting(t *testing.T) {
	mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}
	key := client.ObjectKeyFromObject(mg)
	cases := map[string]struct {
		reason string
		pass   func(*spare) bool
	}{
		"Create": {
			reason: "A new resource is a change.",
			pass:   func(s *spare) bool { return s.noting().Create(event.CreateEvent{Object: mg}) },
		},
		"Update": {
			reason: "An update the filters before let through is a change.",
			pass:   func(s *spare) bool { return s.noting().Update(event.UpdateEvent{ObjectOld: mg, ObjectNew: mg}) },
		},
		"Delete": {
			reason: "A deleted resource is a change.",
			pass:   func(s *spare) bool { return s.noting().Delete(event.DeleteEvent{Object: mg}) },
		},
		"Generic": {
			reason: "So is a generic event.",
			pass:   func(s *spare) bool { return s.noting().Generic(event.GenericEvent{Object: mg}) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newSpare(rate.NewLimiter(100, 1000), time.Minute, same)
			if !tc.pass(s) {
				t.Errorf("%s\nnoting(): the event was filtered out", tc.reason)
			}
			if !s.changes.has(key) {
				t.Errorf("%s\nnoting(): the resource is not noted as changed", tc.reason)
			}
		})
	}
}

func TestNoSpare(t *testing.T) {
	var s *spare
	s.changed(reconcile.Request{}) // Wakes call it whether or not there is a spare.
	want := reconcile.Result{RequeueAfter: time.Minute}
	inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return want, nil })
	got, err := s.polls(s.ran(inner)).Reconcile(context.Background(), reconcile.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Reconcile(...): without a spare, every reconcile is the rate-limited one: -want, +got:\n%s", diff)
	}
	if s.filter(predicate.NewPredicateFuncs(func(client.Object) bool { return false })).Create(event.CreateEvent{Object: &v1alpha1.LambdaFunction{}}) {
		t.Errorf("filter(...): without a spare, the filter given decides alone: it passed an event the filter given drops")
	}
}
