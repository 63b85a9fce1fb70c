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
	// cpu is the function process's user and system time per request,
	// which a request waiting its turn on a busy machine does not add to.
	cpu          time.Duration
	rss, peakRSS uint64
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
	return fmt.Sprintf("p50 %8s  p99 %8s  mean %8s  cpu %8s  %s per request  rss %.1f MiB (files %.1f, peak %.1f)  %d desired (same as ours: %t)",
		r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.mean.Round(time.Microsecond), r.cpu.Round(time.Microsecond), allocs,
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

// A session is one contender's function, started and warm, while a round
// measures it: the functions of a round are all up at once and take turns,
// so that a machine that slows down for a while slows all of them alike.
type session struct {
	c       *contender
	p       *started
	conn    *grpc.ClientConn
	w       *wireCall
	first   *fnv1.RunFunctionResponse
	before  bench.Metrics
	was     process.Usage
	samples []time.Duration
}

// begin starts the function and warms it up.
func (c *contender) begin(ctx context.Context, warmup int) (*session, error) {
	p, err := c.start()
	if err != nil {
		return nil, err
	}
	s := &session{c: c, p: p}
	if err := s.warm(ctx, warmup); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// warm connects, takes the first answer, sends the warm-up requests and
// then reads what the measured requests are counted from.
func (s *session) warm(ctx context.Context, warmup int) error {
	var err error
	if s.conn, err = grpc.NewClient(s.p.address, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return err
	}
	if s.first, err = firstAnswer(ctx, fnv1.NewFunctionRunnerServiceClient(s.conn), s.c.req); err != nil {
		return err
	}
	if s.w, err = newWireCall(ctx, s.conn, s.c.req); err != nil {
		return err
	}
	for range warmup {
		if err := s.w.call(ctx); err != nil {
			return err
		}
	}
	if s.c.passes != "" {
		if s.before, err = bench.Scrape(ctx, http.DefaultClient, "http://"+s.p.metrics+"/metrics"); err != nil {
			return err
		}
	}
	s.was, err = s.p.Usage()
	return err
}

// measure sends n requests one at a time and times each.
func (s *session) measure(ctx context.Context, n int) error {
	for range n {
		start := time.Now()
		if err := s.w.call(ctx); err != nil {
			return errors.Wrap(err, s.c.name)
		}
		s.samples = append(s.samples, time.Since(start))
	}
	return nil
}

// stop stops the function.
func (s *session) stop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.p.Stop()
}

// end is what the session measured; the function is stopped after.
func (s *session) end(ctx context.Context) (result, error) {
	defer s.stop()
	requests := len(s.samples)
	u, err := s.p.Usage()
	if err != nil {
		return result{}, err
	}
	var total time.Duration
	for _, d := range s.samples {
		total += d
	}
	r := result{
		p50: bench.Percentile(s.samples, 50), p99: bench.Percentile(s.samples, 99), mean: total / time.Duration(requests),
		cpu:    time.Duration((u.CPUSeconds - s.was.CPUSeconds) / float64(requests) * float64(time.Second)),
		allocs: -1, bytes: -1, desired: len(s.first.GetDesired().GetResources()), difference: desiredDiff(s.c.reference, s.first),
	}
	if s.c.passes != "" {
		after, err := bench.Scrape(ctx, http.DefaultClient, "http://"+s.p.metrics+"/metrics")
		if err != nil {
			return result{}, err
		}
		if n := after.Sum(s.c.passes, nil) - s.before.Sum(s.c.passes, nil); int(n) != requests {
			return result{}, errors.Errorf(errNotMeasuredFmt, s.p.metrics, n, requests)
		}
		r.allocs = (after.Sum("go_memstats_mallocs_total", nil) - s.before.Sum("go_memstats_mallocs_total", nil)) / float64(requests)
		r.bytes = (after.Sum("go_memstats_alloc_bytes_total", nil) - s.before.Sum("go_memstats_alloc_bytes_total", nil)) / float64(requests)
	}
	if u, err = s.p.Usage(); err != nil {
		return result{}, err
	}
	r.rss, r.peakRSS, r.rssFile = u.RSS, u.PeakRSS, u.RSSFile
	parts, err := resident.Of(s.p.Pid(), resident.Sections)
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
