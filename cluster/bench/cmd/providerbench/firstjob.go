package main

import (
	"context"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A firstJobs measures what a user waits for first: from the create of a
// function to its build Job existing. The create is timed before it is
// sent, the Job when the benchmark's informer first sees it, which adds the
// watch's delivery (milliseconds on loopback).
type firstJobs struct {
	mu      sync.Mutex
	created map[string]time.Time
	job     map[string]time.Time
}

// watchFirstJobs starts timing the Jobs the watcher sees.
func watchFirstJobs(ctx context.Context, w *watcher) (*firstJobs, error) {
	f := &firstJobs{created: map[string]time.Time{}, job: map[string]time.Time{}}
	inf, err := w.GetInformer(ctx, &batchv1.Job{})
	if err != nil {
		return nil, err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		j, ok := obj.(*batchv1.Job)
		if !ok {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if name := j.GetLabels()[render.LabelResource]; name != "" {
			if _, seen := f.job[name]; !seen {
				f.job[name] = time.Now()
			}
		}
	}})
	return f, err
}

// creating notes that a function's create is about to be sent.
func (f *firstJobs) creating(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created[name] = time.Now()
}

// percentiles are the p50 and p99 of create to Job over the functions whose
// Job was seen.
func (f *firstJobs) percentiles() (p50, p99 time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var waits []time.Duration
	for name, at := range f.job {
		if c, ok := f.created[name]; ok {
			waits = append(waits, at.Sub(c))
		}
	}
	if len(waits) == 0 {
		return 0, 0
	}
	return bench.Percentile(waits, 50), bench.Percentile(waits, 99)
}
