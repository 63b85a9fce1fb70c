package main

import (
	"context"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// A snapshot is the API server's request counters, the provider's reconcile
// counter and its usage at one moment.
type snapshot struct {
	reads, writes  float64
	writesByVerb   map[string]float64
	writeResources map[string]float64
	readResources  map[string]float64
	reconciles     float64
	// reconcilesBy are the reconciles by how they ended, as
	// controller-runtime counts them: a reconcile the rate limiter put off
	// is a requeue_after.
	reconcilesBy map[string]float64
	usage        process.Usage
	// liveHeap is what the provider's collector last marked live, from Go's
	// runtime metrics; -1 when the provider does not serve them.
	liveHeap float64
}

// liveHeapMetric is Go's /gc/heap/live:bytes as client_golang serves it.
const liveHeapMetric = "go_gc_heap_live_bytes"

// readVerbs are the API server's names of requests that read. WATCH is left
// out: a watch is counted once, when it starts.
var readVerbs = map[string]bool{"GET": true, "LIST": true}

// writeVerbs are its names of requests that write.
var writeVerbs = map[string]bool{"POST": true, "CREATE": true, "PUT": true, "UPDATE": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// ownRequests leaves out the API server's own: its identity leases.
func ownRequests(l map[string]string) bool { return l["resource"] != "leases" }

// takeSnapshot reads the API server's and the provider's metrics.
func takeSnapshot(ctx context.Context, cfg *rest.Config, c contender, p *process.Process) (snapshot, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return snapshot{}, err
	}
	api, err := bench.Scrape(ctx, hc, strings.TrimSuffix(cfg.Host, "/")+"/metrics")
	if err != nil {
		return snapshot{}, err
	}
	prov, err := bench.Scrape(ctx, http.DefaultClient, c.metricsURL)
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{writesByVerb: map[string]float64{}, writeResources: map[string]float64{}, readResources: map[string]float64{}}
	const requests = "apiserver_request_total"
	s.reads = api.Sum(requests, func(l map[string]string) bool { return ownRequests(l) && readVerbs[l["verb"]] })
	s.writes = api.Sum(requests, func(l map[string]string) bool { return ownRequests(l) && writeVerbs[l["verb"]] })
	for v := range writeVerbs {
		s.writesByVerb[v] = api.Sum(requests, func(l map[string]string) bool { return ownRequests(l) && l["verb"] == v })
	}
	for _, f := range api[requests].GetMetric() {
		labels := map[string]string{}
		for _, l := range f.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !ownRequests(labels) {
			continue
		}
		resource := labels["resource"] + "/" + labels["subresource"]
		if code := labels["code"]; code != "" && code[0] != '2' {
			resource += " " + code
		}
		switch {
		case writeVerbs[labels["verb"]]:
			s.writeResources[resource] += f.GetCounter().GetValue()
		case readVerbs[labels["verb"]]:
			s.readResources[labels["verb"]+" "+resource] += f.GetCounter().GetValue()
		}
	}
	s.reconcilesBy = prov.SumBy("controller_runtime_reconcile_total", "result", func(l map[string]string) bool {
		return strings.Contains(l["controller"], c.controller)
	})
	s.reconciles = sum(s.reconcilesBy)
	s.liveHeap = -1
	if _, ok := prov[liveHeapMetric]; ok {
		s.liveHeap = prov.Sum(liveHeapMetric, nil)
	}
	s.usage, err = p.Usage()
	return s, err
}

// steady records the steady state between two snapshots.
func (r *result) steady(before, after snapshot) {
	r.reconciles = after.reconciles - before.reconciles
	per := func(v float64) float64 {
		if r.reconciles == 0 {
			return 0
		}
		return v / r.reconciles
	}
	r.reads = per(after.reads - before.reads)
	r.writes = per(after.writes - before.writes)
	r.writesByVerb = increases(before.writesByVerb, after.writesByVerb)
	r.writeResources = increases(before.writeResources, after.writeResources)
	r.readResources = increases(before.readResources, after.readResources)
	r.steadyCPU = after.usage.CPUSeconds - before.usage.CPUSeconds
	r.steadyRSS = after.usage.RSS
	r.steadyLive = after.liveHeap
	r.peakRSS = after.usage.PeakRSS
}

// increases are the counters that grew from before to after, by how much.
func increases(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, n := range after {
		if n > before[k] {
			d[k] = n - before[k]
		}
	}
	return d
}
