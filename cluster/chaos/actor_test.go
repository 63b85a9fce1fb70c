package chaos

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// actTick is how often the actor looks for work.
const actTick = 300 * time.Millisecond

// An actor plays the Job controller, the kubelet and Knative for one
// namespace until its context ends. A write that fails, as they do while
// kube-apiserver or etcd restarts, is tried again on the next tick.
type actor struct {
	kube client.Client
	ns   string
	// failed counts writes that failed and were tried again.
	failed atomic.Int64
	// finished holds the Jobs played to success, by UID.
	finished sets.Set[string]
}

func (a *actor) run(ctx context.Context) {
	a.finished = sets.New[string]()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(actTick):
		}
		a.finishJobs(ctx)
		a.markServices(ctx)
		a.markEventing(ctx)
	}
}

// parallel plays each of n at once, eight at a time, counting failures.
func (a *actor) parallel(n int, play func(i int, t playact.T)) {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			if err := playact.Try(func(t playact.T) { play(i, t) }); err != nil {
				a.failed.Add(1)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// finishJobs succeeds every build Job not played yet, with a digest.
func (a *actor) finishJobs(ctx context.Context) {
	l := &batchv1.JobList{}
	if err := a.kube.List(ctx, l, client.InNamespace(a.ns)); err != nil {
		a.failed.Add(1)
		return
	}
	var todo []*batchv1.Job
	for i := range l.Items {
		if j := &l.Items[i]; !a.finished.Has(string(j.UID)) && j.DeletionTimestamp == nil {
			todo = append(todo, j)
		}
	}
	done := make([]bool, len(todo))
	a.parallel(len(todo), func(i int, t playact.T) {
		playact.FinishJob(ctx, t, a.kube, todo[i], 0, digestOf(todo[i].Name))
		done[i] = true
	})
	for i, ok := range done {
		if ok {
			a.finished.Insert(string(todo[i].UID))
		}
	}
}

// markServices makes Ready every Service Knative has not yet seen at its
// generation.
func (a *actor) markServices(ctx context.Context) {
	l := &servingv1.ServiceList{}
	if err := a.kube.List(ctx, l, client.InNamespace(a.ns)); err != nil {
		a.failed.Add(1)
		return
	}
	var todo []*servingv1.Service
	for i := range l.Items {
		if s := &l.Items[i]; s.Status.ObservedGeneration != s.Generation || !s.Status.GetCondition(apis.ConditionReady).IsTrue() {
			todo = append(todo, s)
		}
	}
	a.parallel(len(todo), func(i int, t playact.T) { playact.MarkServiceReady(ctx, t, a.kube, todo[i]) })
}

// markEventing makes Ready every Broker and Trigger not yet Ready at its
// generation.
func (a *actor) markEventing(ctx context.Context) {
	todo, err := playact.Unreported(ctx, a.kube, a.ns)
	if err != nil {
		a.failed.Add(1)
		return
	}
	a.parallel(len(todo), func(i int, t playact.T) { playact.MarkEventingReady(ctx, t, a.kube, todo[i]) })
}

// digestOf is the digest a build Job pushes: one per Job.
func digestOf(job string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(job)))
}
