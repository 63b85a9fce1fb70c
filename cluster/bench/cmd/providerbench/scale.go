package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

const benchNamespace = "bench"

// workers write to the API server at once while creating functions or
// playing Knative: enough to keep it busy, few enough to leave the provider
// the cores.
const workers = 4

// tick is how often the benchmark looks at its caches.
const tick = 100 * time.Millisecond

// A setting is one run's parameters.
type setting struct {
	n      int
	inline bool
	// profiled runs take Go's CPU profile through the rush and the heap
	// profile at rest.
	profiled bool
	poll     time.Duration
	rate     int
	window   time.Duration
}

// A result is what one run measured.
type result struct {
	contender string
	setting
	// servicesCreated is how long after the first create the last Service
	// appeared.
	servicesCreated time.Duration
	// played is how long the benchmark took to play Knative marking every
	// Service Ready, the same play for every contender; the provider works
	// meanwhile.
	played time.Duration
	// readyAfterMark is how long after the last Service was marked Ready
	// the last managed resource was.
	readyAfterMark time.Duration
	// converged is from the first create to the last managed resource
	// Ready.
	converged time.Duration
	// convergeCPU is the provider's CPU seconds until then.
	convergeCPU float64
	peakRSS     uint64
	steadyRSS   uint64
	// steadyLive is the heap the collector last marked live at rest, -1
	// when the provider does not say: RSS less the collector's room (GOGC)
	// and the executable's pages.
	steadyLive float64
	// idleRSS is before the first create, with the provider started.
	idleRSS uint64
	// convergeRequests are the API server's requests, reads and writes,
	// from the first create to the last Ready; the benchmark's own are among
	// them.
	convergeRequests float64
	// Per steady-state reconcile.
	reconciles     float64
	reads, writes  float64
	steadyCPU      float64
	writesByVerb   map[string]float64
	writeResources map[string]float64
	readResources  map[string]float64
	// convergeWrites and convergeReads are the API writes and reads until
	// all were Ready, by resource; the benchmark's own are among them.
	convergeWrites, convergeReads map[string]float64
	// convergeReconciles are the provider's reconciles of the managed kind
	// until all were Ready, by how they ended.
	convergeReconciles map[string]float64
	// jobP50 and jobP99 are from a function's create to its build Job,
	// for builds.
	jobP50, jobP99 time.Duration
}

// run starts a control plane and the contender, creates n functions, plays
// Knative (and the Job controller for inline builds) and measures.
func run(ctx context.Context, dir string, c contender, s setting) (*result, error) {
	cp, err := local.StartWithAllCRDs(ctx, local.Options{DataDir: dir})
	if err != nil {
		return nil, err
	}
	defer cp.Stop() //nolint:errcheck // Its processes die with this one anyway.
	// Installing fills in what the server set; the next run installs them
	// again.
	crds := make([]*extv1.CustomResourceDefinition, len(c.crds))
	for i, crd := range c.crds {
		crds[i] = crd.DeepCopy()
	}
	if err := local.InstallCRDs(cp.Config, crds); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	kube, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, kube, kubeconfig, c.config); err != nil {
		return nil, err
	}

	args, env, err := c.args(dir)
	if err != nil {
		return nil, err
	}
	args = append(args, "--poll="+s.poll.String(), fmt.Sprintf("--max-reconcile-rate=%d", s.rate))
	log, err := os.Create(filepath.Join(dir, c.name+".log"))
	if err != nil {
		return nil, err
	}
	defer log.Close() //nolint:errcheck // A log.
	p, err := process.Start(c.name, c.bin, process.Options{Env: append(env, "KUBECONFIG="+kubeconfig), Out: log}, args...)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	if err := waitScrape(ctx, http.DefaultClient, c.metricsURL); err != nil {
		return nil, errors.Wrapf(err, "%s did not start; see %s", c.name, log.Name())
	}

	w, err := newWatcher(ctx, cp.Config, c.managed)
	if err != nil {
		return nil, err
	}
	r := &result{contender: c.name, setting: s}
	idle, err := takeSnapshot(ctx, cp.Config, c, p)
	if err != nil {
		return nil, err
	}
	jobs, err := watchFirstJobs(ctx, w)
	if err != nil {
		return nil, err
	}
	pprofURL := ""
	if s.profiled {
		pprofURL = c.pprofURL
	}
	cpuProfile := profile(ctx, pprofURL, fmt.Sprintf("profile?seconds=%d", int(cpuProfileTime.Seconds())), filepath.Join(dir, "cpu.pprof"))
	start := time.Now()
	if err := parallel(s.n, func(i int) error {
		o, err := c.function(benchNamespace, i, s.inline)
		if err != nil {
			return err
		}
		jobs.creating(o.GetName())
		return kube.Create(ctx, o)
	}); err != nil {
		return nil, err
	}

	finished := map[string]bool{}
	if err := until(ctx, p, func() (bool, error) {
		if s.inline {
			if err := finishBuilds(ctx, kube, w, finished); err != nil {
				return false, err
			}
		}
		return w.count(&servingv1.ServiceList{}, nil) == s.n, nil
	}); err != nil {
		return nil, err
	}
	r.servicesCreated = time.Since(start)
	r.jobP50, r.jobP99 = jobs.percentiles()

	if err := markServicesReady(ctx, kube, w); err != nil {
		return nil, err
	}
	marked := time.Now()
	r.played = marked.Sub(start) - r.servicesCreated
	if err := until(ctx, p, func() (bool, error) { return w.countManaged(conditionTrue("Ready")) == s.n, nil }); err != nil {
		return nil, err
	}
	r.readyAfterMark, r.converged = time.Since(marked), time.Since(start)
	u, err := p.Usage()
	if err != nil {
		return nil, err
	}
	r.convergeCPU = u.CPUSeconds
	converged, err := takeSnapshot(ctx, cp.Config, c, p)
	if err != nil {
		return nil, err
	}
	r.convergeWrites = increases(idle.writeResources, converged.writeResources)
	r.convergeReads = increases(idle.readResources, converged.readResources)
	r.convergeReconciles = increases(idle.reconcilesBy, converged.reconcilesBy)
	r.convergeRequests = converged.reads + converged.writes - idle.reads - idle.writes
	r.idleRSS = idle.usage.RSS

	// One poll for the last reconciles of the rush to settle, then a window
	// of nothing but polls.
	if err := sleep(ctx, p, s.poll); err != nil {
		return nil, err
	}
	before, err := takeSnapshot(ctx, cp.Config, c, p)
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, p, s.window); err != nil {
		return nil, err
	}
	after, err := takeSnapshot(ctx, cp.Config, c, p)
	if err != nil {
		return nil, err
	}
	r.steady(before, after)
	if err := errors.Join(<-cpuProfile, <-profile(ctx, pprofURL, "heap", filepath.Join(dir, "heap.pprof"))); err != nil {
		return nil, err
	}
	return r, nil
}

// prepare makes the namespace, the kubeconfig Secret and the provider config.
func prepare(ctx context.Context, kube client.Client, kubeconfig string, config client.Object) error {
	secret, err := targetKubeconfig(kubeconfig)
	if err != nil {
		return err
	}
	// Create fills in what the server set; the contender's config is used
	// again in the next run.
	config = config.DeepCopyObject().(client.Object) //nolint:forcetypeassert // A copy of a client.Object is one.
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}, secret, config} {
		if err := kube.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// finishBuilds plays the Job controller and the kubelet for every build Job
// not played yet: each succeeds with a digest.
func finishBuilds(ctx context.Context, kube client.Client, w *watcher, finished map[string]bool) error {
	// Only the Jobs to play are copied out of the cache: playing writes to
	// them.
	jobs := &batchv1.JobList{}
	if err := w.List(ctx, jobs, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	todo := make([]*batchv1.Job, 0, len(jobs.Items))
	for i := range jobs.Items {
		if j := &jobs.Items[i]; !finished[j.Name] {
			todo = append(todo, j.DeepCopy())
			finished[j.Name] = true
		}
	}
	return parallel(len(todo), func(i int) error {
		return playact.Try(func(t playact.T) {
			playact.FinishJob(ctx, t, kube, todo[i], 0, "sha256:"+strings.Repeat("ab", 32))
		})
	})
}

// markServicesReady plays Knative Serving for every Service. Knative's
// controllers read the Services and Revisions from their informers and
// write to the API server; so does the play, from the benchmark's.
func markServicesReady(ctx context.Context, kube client.Client, w *watcher) error {
	svcs := &servingv1.ServiceList{}
	if err := w.List(ctx, svcs); err != nil {
		return err
	}
	cached, err := client.New(w.cfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: revisionsByService{Reader: w}}})
	if err != nil {
		return err
	}
	return parallel(len(svcs.Items), func(i int) error {
		svc, c := &svcs.Items[i], cached
		for {
			err := playact.Try(func(t playact.T) { playact.MarkServiceReady(ctx, t, c, svc) })
			if err == nil || !strings.Contains(err.Error(), "the object has been modified") {
				return err
			}
			// A provider wrote the Service after the informer saw it,
			// and the informer may not have caught up: the play starts
			// again from the API server.
			c, svc = kube, &servingv1.Service{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(&svcs.Items[i]), svc); err != nil {
				return err
			}
		}
	})
}

// parallel runs fn for 0..n-1 on the workers and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// until checks done every tick until it is, the context ends or the
// provider exits.
func until(ctx context.Context, p *process.Process, done func() (bool, error)) error {
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		if err := sleep(ctx, p, tick); err != nil {
			return err
		}
	}
}

// sleep waits d unless the context ends or the provider exits.
func sleep(ctx context.Context, p *process.Process, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-p.Exited:
		p.Exited <- err
		return errors.Errorf("%s exited: %v", p.Name, err)
	case <-time.After(d):
		return nil
	}
}

// waitScrape waits until a metrics endpoint answers.
func waitScrape(ctx context.Context, c *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		_, err := bench.Scrape(ctx, c, url)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// conditionTrue matches an object whose condition typ is True.
func conditionTrue(typ string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == typ {
				return m["status"] == string(corev1.ConditionTrue)
			}
		}
		return false
	}
}

// cpuProfileTime is how long the CPU profile of the rush runs.
const cpuProfileTime = 20 * time.Second

// profile saves the profile at base+name to path in the background; nothing
// when base is empty.
func profile(ctx context.Context, base, name, path string) <-chan error {
	done := make(chan error, 1)
	if base == "" {
		done <- nil
		return done
	}
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+name, nil)
		if err != nil {
			done <- err
			return
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer rsp.Body.Close() //nolint:errcheck // Only read from.
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, rsp.Body)
		done <- errors.Join(err, f.Close())
	}()
	return done
}
