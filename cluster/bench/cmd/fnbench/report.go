package main

import (
	"fmt"
	"io"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
)

// summarise prints each measured function's medians over the rounds, and
// each peer's p99 over ours.
func summarise(w io.Writer, contenders []*contender) {
	med := func(rs []result, f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return bench.Median(v)
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	fmt.Fprintln(w, "\n| function | rounds | p50 µs | p99 µs | mean µs | allocs/request | bytes/request | RSS MiB | same output as ours |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var oursP99 float64
	for i, c := range contenders {
		if c.skip != "" {
			fmt.Fprintf(w, "| %s | 0 | not measured: %s |  |  |  |  |  |  |\n", c.name, c.skip)
			continue
		}
		p99 := med(c.results, func(r result) float64 { return us(r.p99) })
		if i == 0 {
			oursP99 = p99
		}
		allocs, bytes := "n/a", "n/a"
		if a := med(c.results, func(r result) float64 { return r.allocs }); a >= 0 {
			allocs, bytes = fmt.Sprintf("%.0f", a), fmt.Sprintf("%.0f", med(c.results, func(r result) float64 { return r.bytes }))
		}
		same := true
		for _, r := range c.results {
			same = same && r.same
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.0f | %s | %s | %.1f | %t |\n", c.name, len(c.results),
			med(c.results, func(r result) float64 { return us(r.p50) }), p99,
			med(c.results, func(r result) float64 { return us(r.mean) }), allocs, bytes,
			med(c.results, func(r result) float64 { return float64(r.rss) / (1 << 20) }), same)
		if i > 0 && oursP99 > 0 {
			fmt.Fprintf(w, "\n%s p99 ÷ ours: %.1f×\n", c.name, p99/oursP99)
		}
	}
}
