package main

import (
	"fmt"
	"io"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
)

// A summary is one contender's medians over its rounds.
type summary struct {
	p50, p99, mean, cpu, allocs, bytes, rss, rssFile float64
	// text, rodata and pclntab are MiB of the executable resident in each
	// of these sections, and other in the rest.
	text, rodata, pclntab, other float64
	// difference is the first round's difference from ours; every round
	// sends the same request.
	difference string
}

// summaryOf is a contender's medians over its rounds; allocs and bytes are
// negative when it serves no metrics.
func summaryOf(c *contender) summary {
	med := func(f func(result) float64) float64 {
		v := make([]float64, len(c.results))
		for i, r := range c.results {
			v[i] = f(r)
		}
		return bench.Median(v)
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	s := summary{
		p50:        med(func(r result) float64 { return us(r.p50) }),
		p99:        med(func(r result) float64 { return us(r.p99) }),
		mean:       med(func(r result) float64 { return us(r.mean) }),
		cpu:        med(func(r result) float64 { return us(r.cpu) }),
		allocs:     med(func(r result) float64 { return r.allocs }),
		bytes:      med(func(r result) float64 { return r.bytes }),
		rss:        med(func(r result) float64 { return float64(r.rss) / (1 << 20) }),
		rssFile:    med(func(r result) float64 { return float64(r.rssFile) / (1 << 20) }),
		difference: c.results[0].difference,
	}
	section := func(name string) float64 {
		return med(func(r result) float64 { return float64(r.sections[name]) / (1 << 20) })
	}
	s.text, s.rodata, s.pclntab = section(".text"), section(".rodata"), section(".gopclntab")
	s.other = med(func(r result) float64 {
		var n uint64
		for name, b := range r.sections {
			if name != ".text" && name != ".rodata" && name != ".gopclntab" {
				n += b
			}
		}
		return float64(n) / (1 << 20)
	})
	return s
}

// summarise prints each measured function's medians over the rounds, ours
// as a multiple of the floor, and each peer's latency over ours.
func summarise(w io.Writer, ours, floor *contender, peers []*contender) {
	fmt.Fprintln(w, "\n| function | rounds | p50 µs | p99 µs | mean µs | CPU µs/request | allocs/request | bytes/request | RSS MiB | of which files MiB | same output as ours |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	sums := map[*contender]summary{}
	for _, c := range append([]*contender{ours, floor}, peers...) {
		if c.skip != "" || len(c.results) == 0 {
			fmt.Fprintf(w, "| %s | 0 | not measured: %s |  |  |  |  |  |  |  |  |\n", c.name, c.skip)
			continue
		}
		s := summaryOf(c)
		sums[c] = s
		allocs, bytes := "n/a", "n/a"
		if s.allocs >= 0 {
			allocs, bytes = fmt.Sprintf("%.0f", s.allocs), fmt.Sprintf("%.0f", s.bytes)
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %s | %s | %.1f | %.1f | %t |\n", c.name, len(c.results), s.p50, s.p99, s.mean, s.cpu, allocs, bytes, s.rss, s.rssFile, s.difference == "")
	}
	o, ok := sums[ours]
	if !ok {
		return
	}
	fmt.Fprintln(w)
	if f, ok := sums[floor]; ok {
		fmt.Fprintf(w, "ours ÷ floor: p50 %.1f×, p99 %.1f×, CPU %.2f×, allocs %.1f×, bytes %.1f×\n", o.p50/f.p50, o.p99/f.p99, o.cpu/f.cpu, o.allocs/f.allocs, o.bytes/f.bytes)
	}
	for _, c := range peers {
		if p, ok := sums[c]; ok {
			fmt.Fprintf(w, "%s ÷ ours: p50 %.1f×, p99 %.1f×, CPU %.1f×; RSS ours ÷ it %.2f (files %.2f, the rest %.2f)\n",
				c.name, p.p50/o.p50, p.p99/o.p99, p.cpu/o.cpu, o.rss/p.rss, o.rssFile/p.rssFile, (o.rss-o.rssFile)/(p.rss-p.rssFile))
		}
	}
	fmt.Fprintln(w, "\n| function | executable resident MiB | .text | .rodata | .gopclntab | other sections |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range append([]*contender{ours, floor}, peers...) {
		if s, ok := sums[c]; ok {
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", c.name, s.text+s.rodata+s.pclntab+s.other, s.text, s.rodata, s.pclntab, s.other)
		}
	}
	for _, c := range peers {
		if p, ok := sums[c]; ok && p.difference != "" {
			fmt.Fprintf(w, "\n%s desires other objects than ours (-ours +it):\n%s", c.name, p.difference)
		}
	}
}
