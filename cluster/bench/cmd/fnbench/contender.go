package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
	"github.com/knative-lambda/provider-knative-lambda/cluster/bench/resident"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// errNotMeasuredFmt says the metrics scraped are not the measured function's.
const errNotMeasuredFmt = "the metrics at %s are not the measured function's: they count %.0f passes for %d requests"

// startTimeout is how long a function has to answer its first request.
const startTimeout = time.Minute

// passesMetric counts the passes ours ran: what tells that the metrics
// scraped are of the process measured.
const passesMetric = "lambda_function_passes_total"

// A contender is one function the benchmark measures.
type contender struct {
	name string
	bin  string
	// args come before the addresses fnbench chooses.
	args []string
	// passes is the counter of requests served at --metrics-address, which
	// tells that the metrics scraped are of the process measured; the peers
	// serve no metrics there, and have none.
	passes string
	req    *fnv1.RunFunctionRequest
	// reference is ours' answer, which each contender's is compared with.
	reference *fnv1.RunFunctionResponse
	// skip says why this contender is not measured.
	skip    string
	results []result
}

// A result is one round of one contender.
type result struct {
	p50, p99, mean time.Duration
	// allocs and bytes per request, from the process's Go runtime metrics;
	// negative when the function serves none.
	allocs, bytes float64
	rss, peakRSS  uint64
	// rssFile is the part of rss that maps the executable.
	rssFile uint64
	// sections are the executable's resident bytes by ELF section.
	sections map[string]uint64
	desired  int
	// difference is how the function's desired resources differ from ours'
	// (-ours +it); empty when they are the same.
	difference string
}

func (r result) String() string {
	allocs := "n/a"
	if r.allocs >= 0 {
		allocs = fmt.Sprintf("%.0f allocs %.0f B", r.allocs, r.bytes)
	}
	return fmt.Sprintf("p50 %8s  p99 %8s  mean %8s  %s per request  rss %.1f MiB (files %.1f, peak %.1f)  %d desired (same as ours: %t)",
		r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.mean.Round(time.Microsecond), allocs,
		float64(r.rss)/(1<<20), float64(r.rssFile)/(1<<20), float64(r.peakRSS)/(1<<20), r.desired, r.difference == "")
}

// A started function serves on loopback addresses nothing else held when
// it started: a fixed port another program holds would measure that one.
type started struct {
	*process.Process
	address, metrics string
}

// start starts the function on free loopback addresses.
func (c *contender) start() (*started, error) {
	addr, err := loopback.Free()
	if err != nil {
		return nil, err
	}
	s := &started{address: addr}
	args := append(slices.Clone(c.args), "--address="+addr)
	if c.passes != "" {
		if s.metrics, err = loopback.Free(); err != nil {
			return nil, err
		}
		args = append(args, "--metrics-address="+s.metrics)
	}
	if s.Process, err = process.Start(c.name, c.bin, process.Options{Out: os.Stderr}, args...); err != nil {
		return nil, err
	}
	return s, nil
}

// run starts the function, warms it up, measures and stops it.
func (c *contender) run(ctx context.Context, warmup, requests int) (result, error) {
	p, err := c.start()
	if err != nil {
		return result{}, err
	}
	defer p.Stop()
	conn, err := grpc.NewClient(p.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return result{}, err
	}
	defer conn.Close() //nolint:errcheck // Loopback.
	fn := fnv1.NewFunctionRunnerServiceClient(conn)

	first, err := firstAnswer(ctx, fn, c.req)
	if err != nil {
		return result{}, err
	}
	w, err := newWireCall(ctx, conn, c.req)
	if err != nil {
		return result{}, err
	}
	for range warmup {
		if err := w.call(ctx); err != nil {
			return result{}, err
		}
	}
	var before bench.Metrics
	if c.passes != "" {
		if before, err = bench.Scrape(ctx, http.DefaultClient, "http://"+p.metrics+"/metrics"); err != nil {
			return result{}, err
		}
	}
	samples := make([]time.Duration, requests)
	var total time.Duration
	for i := range samples {
		start := time.Now()
		if err := w.call(ctx); err != nil {
			return result{}, err
		}
		samples[i] = time.Since(start)
		total += samples[i]
	}
	r := result{
		p50: bench.Percentile(samples, 50), p99: bench.Percentile(samples, 99), mean: total / time.Duration(requests),
		allocs: -1, bytes: -1, desired: len(first.GetDesired().GetResources()), difference: desiredDiff(c.reference, first),
	}
	if c.passes != "" {
		after, err := bench.Scrape(ctx, http.DefaultClient, "http://"+p.metrics+"/metrics")
		if err != nil {
			return result{}, err
		}
		if n := after.Sum(c.passes, nil) - before.Sum(c.passes, nil); int(n) != requests {
			return result{}, errors.Errorf(errNotMeasuredFmt, p.metrics, n, requests)
		}
		r.allocs = (after.Sum("go_memstats_mallocs_total", nil) - before.Sum("go_memstats_mallocs_total", nil)) / float64(requests)
		r.bytes = (after.Sum("go_memstats_alloc_bytes_total", nil) - before.Sum("go_memstats_alloc_bytes_total", nil)) / float64(requests)
	}
	u, err := p.Usage()
	if err != nil {
		return result{}, err
	}
	r.rss, r.peakRSS, r.rssFile = u.RSS, u.PeakRSS, u.RSSFile
	parts, err := resident.Of(p.Pid(), resident.Sections)
	if err != nil {
		return result{}, err
	}
	r.sections = map[string]uint64{}
	for _, part := range parts {
		r.sections[part.Name] = part.Bytes
	}
	return r, nil
}

// firstAnswer sends the request until the function has started and answers.
func firstAnswer(ctx context.Context, fn fnv1.FunctionRunnerServiceClient, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		rsp, err := fn.RunFunction(ctx, req, grpc.WaitForReady(true))
		if err == nil {
			return rsp, nil
		}
		if ctx.Err() != nil {
			return nil, errors.Wrap(err, "the function did not answer")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// probe runs the function once and returns its answer to the request.
func (c *contender) probe(ctx context.Context) (*fnv1.RunFunctionResponse, error) {
	p, err := c.start()
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	conn, err := grpc.NewClient(p.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close() //nolint:errcheck // Loopback.
	return firstAnswer(ctx, fnv1.NewFunctionRunnerServiceClient(conn), c.req)
}

// desiredDiff is how b's desired composed resources differ from a's
// (-a +b), so that a peer that does other work says which.
func desiredDiff(a, b *fnv1.RunFunctionResponse) string {
	resources := func(r *fnv1.RunFunctionResponse) map[string]map[string]any {
		m := make(map[string]map[string]any, len(r.GetDesired().GetResources()))
		for name, res := range r.GetDesired().GetResources() {
			m[name] = res.GetResource().AsMap()
		}
		return m
	}
	return cmp.Diff(resources(a), resources(b))
}
