package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
)

const mib = 1 << 20

// print writes one run's line.
func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "%-24s n=%-5d %-6s services %7.1fs  Knative played %6.1fs  ready after mark %6.1fs  converged %7.1fs  cpu %6.1fs  peak rss %5.0f MiB  "+
		"steady: rss %5.0f MiB, %5.0f reconciles, %.2f reads and %.3f writes per reconcile, cpu %.1fs; writes %v by resource %v; reads %v; writes until Ready %v; reads until Ready %v\n",
		r.contender, r.n, r.mode(), r.servicesCreated.Seconds(), r.played.Seconds(), r.readyAfterMark.Seconds(), r.converged.Seconds(), r.convergeCPU,
		float64(r.peakRSS)/mib, float64(r.steadyRSS)/mib, r.reconciles, r.reads, r.writes, r.steadyCPU, r.writesByVerb, r.writeResources, r.readResources, r.convergeWrites, r.convergeReads)
	n := float64(r.n)
	fmt.Fprintf(w, "%-24s n=%-5d per function: converged %.1f ms, %.1f API requests and %.2f reconciles until Ready (%s), %.1f KiB at rest above idle (%.0f MiB)\n",
		r.contender, r.n, 1000*r.converged.Seconds()/n, r.convergeRequests/n, sum(r.convergeReconciles)/n, perEach(r.convergeReconciles, n),
		float64(r.steadyRSS-min(r.idleRSS, r.steadyRSS))/1024/n, float64(r.idleRSS)/mib)
	if r.inline {
		fmt.Fprintf(w, "%-24s n=%-5d create to build Job: p50 %s, p99 %s\n", r.contender, r.n, r.jobP50.Round(time.Millisecond), r.jobP99.Round(time.Millisecond))
	}
}

// sum is the sum of m's values.
func sum(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

// perEach says each of m's values divided by n, in key order.
func perEach(m map[string]float64, n float64) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]/n))
	}
	return strings.Join(parts, ", ")
}

// mode says the run's source, and whether it ran under the profiler.
func (s setting) mode() string {
	if s.profiled {
		return mode(s.inline) + ", profiled"
	}
	return mode(s.inline)
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
	groups := grouped(results)
	type row struct{ converged, services, played, ready, cpu, peak, steady, reads, writes float64 }
	rows := map[key]row{}
	fmt.Fprintln(w, "\n| provider | N | source | runs | Services created | Knative played | Ready after mark | converged | CPU s | peak RSS MiB | steady RSS MiB | reads/reconcile | writes/reconcile |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	keys := sortedKeys(groups)
	for _, k := range keys {
		rs := groups[k]
		r := row{
			converged: median(rs, func(r *result) float64 { return r.converged.Seconds() }),
			services:  median(rs, func(r *result) float64 { return r.servicesCreated.Seconds() }),
			played:    median(rs, func(r *result) float64 { return r.played.Seconds() }),
			ready:     median(rs, func(r *result) float64 { return r.readyAfterMark.Seconds() }),
			cpu:       median(rs, func(r *result) float64 { return r.convergeCPU }),
			peak:      median(rs, func(r *result) float64 { return float64(r.peakRSS) / mib }),
			steady:    median(rs, func(r *result) float64 { return float64(r.steadyRSS) / mib }),
			reads:     median(rs, func(r *result) float64 { return r.reads }),
			writes:    median(rs, func(r *result) float64 { return r.writes }),
		}
		rows[k] = r
		fmt.Fprintf(w, "| %s | %d | %s | %d | %.1f s | %.1f s | %.1f s | %.1f s | %.1f | %.0f | %.0f | %.2f | %.3f |\n",
			k.contender, k.n, mode(k.inline), len(rs), r.services, r.played, r.ready, r.converged, r.cpu, r.peak, r.steady, r.reads, r.writes)
	}
	perFunction(w, keys, groups)
	firstJob(w, keys, groups)
	fmt.Fprintln(w, "\n| N | converge: provider-kubernetes ÷ ours | the providers' own time (created + Ready after mark): provider-kubernetes ÷ ours | peak RSS: ours ÷ provider-kubernetes | CPU: provider-kubernetes ÷ ours |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range keys {
		if k.contender != oursName || k.inline {
			continue
		}
		peer, ok := rows[key{peerName, k.n, false}]
		if !ok {
			continue
		}
		o := rows[k]
		fmt.Fprintf(w, "| %d | %.2f× | %.2f× | %.2f | %.2f× |\n", k.n, peer.converged/o.converged,
			(peer.services+peer.ready)/(o.services+o.ready), o.peak/peer.peak, peer.cpu/o.cpu)
	}
}

// grouped is the runs of each setting.
func grouped(results []*result) map[key][]*result {
	groups := map[key][]*result{}
	for _, r := range results {
		k := key{r.contender, r.n, r.inline}
		groups[k] = append(groups[k], r)
	}
	return groups
}

// sortedKeys orders the settings by size, images before inline builds,
// then by contender.
func sortedKeys(groups map[key][]*result) []key {
	return slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		if a.n != b.n {
			return a.n - b.n
		}
		if a.inline != b.inline {
			return map[bool]int{false: -1, true: 1}[a.inline]
		}
		return map[bool]int{true: 1, false: -1}[a.contender > b.contender]
	})
}

// perFunction prints, per provider and size, the medians per function, and
// against the next smaller size of the same provider and source: each
// function's converge time and API requests as a multiple of that size's,
// and the memory at rest each function above it added.
func perFunction(w io.Writer, keys []key, groups map[key][]*result) {
	fmt.Fprintln(w, "\n| provider | N | source | converged ms per function | API requests per function until Ready | reconciles per function until Ready | steady RSS MiB | "+
		"converged per function ÷ the size before | API requests per function ÷ the size before | "+
		"KiB at rest per function added since the size before | KiB of live heap per function added since the size before |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	last := map[string]key{}
	for _, k := range keys {
		rs := groups[k]
		now := perFunctionOf(rs)
		converged, requests, addedRSS, addedLive := "n/a", "n/a", "n/a", "n/a"
		if prev, ok := last[k.contender+mode(k.inline)]; ok {
			before := perFunctionOf(groups[prev])
			converged = fmt.Sprintf("%.2f× (from N=%d)", now.converged/before.converged, prev.n)
			requests = fmt.Sprintf("%.2f× (from N=%d)", now.requests/before.requests, prev.n)
			addedRSS = added(rs, groups[prev], prev.n, steadyRSS)
			if median(rs, steadyLive) >= 0 && median(groups[prev], steadyLive) >= 0 {
				addedLive = added(rs, groups[prev], prev.n, steadyLive)
			}
		}
		last[k.contender+mode(k.inline)] = k
		fmt.Fprintf(w, "| %s | %d | %s | %.1f | %.1f | %.2f | %.0f | %s | %s | %s | %s |\n", k.contender, k.n, mode(k.inline),
			now.converged, now.requests, now.reconciles, median(rs, steadyRSS)/mib, converged, requests, addedRSS, addedLive)
	}
}

// firstJob prints, per size of inline builds, the medians of what a user
// waits for first: from a function's create to its build Job.
func firstJob(w io.Writer, keys []key, groups map[key][]*result) {
	header := false
	for _, k := range keys {
		if !k.inline {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\n| provider | N | create to build Job: p50 | p99 |")
			fmt.Fprintln(w, "|---|---|---|---|")
			header = true
		}
		rs := groups[k]
		at := func(d func(*result) time.Duration) time.Duration {
			return time.Duration(median(rs, func(r *result) float64 { return float64(d(r)) })).Round(time.Millisecond)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s |\n", k.contender, k.n, at(func(r *result) time.Duration { return r.jobP50 }), at(func(r *result) time.Duration { return r.jobP99 }))
	}
}

// A functionCosts is the medians of one setting's runs per function: ms to
// converge, API requests and reconciles until Ready.
type functionCosts struct{ converged, requests, reconciles float64 }

// perFunctionOf is the costs per function of one setting's runs.
func perFunctionOf(rs []*result) functionCosts {
	n := float64(rs[0].n)
	return functionCosts{
		converged:  1000 * median(rs, func(r *result) float64 { return r.converged.Seconds() }) / n,
		requests:   median(rs, func(r *result) float64 { return r.convergeRequests }) / n,
		reconciles: median(rs, func(r *result) float64 { return sum(r.convergeReconciles) }) / n,
	}
}

func steadyRSS(r *result) float64 { return float64(r.steadyRSS) }

func steadyLive(r *result) float64 { return r.steadyLive }

// added is the median of bytes over runs, in KiB per function run has
// above prevN, the size of the runs before.
func added(runs, before []*result, prevN int, bytes func(*result) float64) string {
	n := float64(runs[0].n)
	return fmt.Sprintf("%.1f (from N=%d)", (median(runs, bytes)-median(before, bytes))/1024/(n-float64(prevN)), prevN)
}

// median is the median of f over runs.
func median(rs []*result, f func(*result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return bench.Median(v)
}
