package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
)

const mib = 1 << 20

// print writes one run's line.
func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "%-24s n=%-5d %-6s services %7.1fs  ready after mark %6.1fs  converged %7.1fs  cpu %6.1fs  peak rss %5.0f MiB  "+
		"steady: rss %5.0f MiB, %5.0f reconciles, %.2f reads and %.3f writes per reconcile, cpu %.1fs; writes %v by resource %v; reads %v; writes until Ready %v\n",
		r.contender, r.n, mode(r.inline), r.servicesCreated.Seconds(), r.readyAfterMark.Seconds(), r.converged.Seconds(), r.convergeCPU,
		float64(r.peakRSS)/mib, float64(r.steadyRSS)/mib, r.reconciles, r.reads, r.writes, r.steadyCPU, r.writesByVerb, r.writeResources, r.readResources, r.convergeWrites)
	if r.inline {
		fmt.Fprintf(w, "%-24s n=%-5d create to build Job: p50 %s, p99 %s\n", r.contender, r.n, r.jobP50.Round(time.Millisecond), r.jobP99.Round(time.Millisecond))
	}
}

func mode(inline bool) string {
	if inline {
		return "inline"
	}
	return "image"
}

// A key groups the runs of one setting.
type key struct {
	contender string
	n         int
	inline    bool
}

// summarise prints the medians of each setting and, per size, ours over the
// peer's.
func summarise(w io.Writer, results []*result) {
	groups := map[key][]*result{}
	for _, r := range results {
		k := key{r.contender, r.n, r.inline}
		groups[k] = append(groups[k], r)
	}
	med := func(rs []*result, f func(*result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return bench.Median(v)
	}
	type row struct{ converged, services, ready, cpu, peak, steady, reads, writes float64 }
	rows := map[key]row{}
	fmt.Fprintln(w, "\n| provider | N | source | runs | Services created | Ready after mark | converged | CPU s | peak RSS MiB | steady RSS MiB | reads/reconcile | writes/reconcile |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		if a.n != b.n {
			return a.n - b.n
		}
		if a.inline != b.inline {
			return map[bool]int{false: -1, true: 1}[a.inline]
		}
		return map[bool]int{true: 1, false: -1}[a.contender > b.contender]
	})
	for _, k := range keys {
		rs := groups[k]
		r := row{
			converged: med(rs, func(r *result) float64 { return r.converged.Seconds() }),
			services:  med(rs, func(r *result) float64 { return r.servicesCreated.Seconds() }),
			ready:     med(rs, func(r *result) float64 { return r.readyAfterMark.Seconds() }),
			cpu:       med(rs, func(r *result) float64 { return r.convergeCPU }),
			peak:      med(rs, func(r *result) float64 { return float64(r.peakRSS) / mib }),
			steady:    med(rs, func(r *result) float64 { return float64(r.steadyRSS) / mib }),
			reads:     med(rs, func(r *result) float64 { return r.reads }),
			writes:    med(rs, func(r *result) float64 { return r.writes }),
		}
		rows[k] = r
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.1f s | %.1f s | %.1f s | %.1f | %.0f | %.0f | %.2f | %.3f |\n",
			k.contender, k.n, mode(k.inline), len(rs), r.services, r.ready, r.converged, r.cpu, r.peak, r.steady, r.reads, r.writes)
	}
	fmt.Fprintln(w, "\n| N | converge: provider-kubernetes ÷ ours | the providers' own time (created + Ready after mark): provider-kubernetes ÷ ours | peak RSS: ours ÷ provider-kubernetes | CPU: provider-kubernetes ÷ ours |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range keys {
		if k.contender != "provider-knative-lambda" || k.inline {
			continue
		}
		peer, ok := rows[key{"provider-kubernetes", k.n, false}]
		if !ok {
			continue
		}
		o := rows[k]
		fmt.Fprintf(w, "| %d | %.2f× | %.2f× | %.2f | %.2f× |\n", k.n, peer.converged/o.converged,
			(peer.services+peer.ready)/(o.services+o.ready), o.peak/peer.peak, peer.cpu/o.cpu)
	}
}
