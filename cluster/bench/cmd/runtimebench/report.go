package main

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench"
)

// A summary is a contender's figures, each the median of its rounds.
type summary struct {
	cold, oneP50, oneP99, manyP50, manyP99 time.Duration
	rps                                    float64
	errors                                 int
	rss                                    float64
}

func summaryOf(c *contender) summary {
	var cold, oneP50, oneP99, manyP50, manyP99, rps, rss []float64
	s := summary{}
	for _, m := range c.rounds {
		cold = append(cold, float64(bench.Percentile(m.cold, 50)))
		oneP50 = append(oneP50, float64(bench.Percentile(m.one.latencies, 50)))
		oneP99 = append(oneP99, float64(bench.Percentile(m.one.latencies, 99)))
		manyP50 = append(manyP50, float64(bench.Percentile(m.many.latencies, 50)))
		manyP99 = append(manyP99, float64(bench.Percentile(m.many.latencies, 99)))
		rps = append(rps, float64(len(m.many.latencies))/m.many.took.Seconds())
		rss = append(rss, float64(m.rss))
		s.errors += m.one.errors + m.many.errors
	}
	s.cold, s.oneP50, s.oneP99 = time.Duration(bench.Median(cold)), time.Duration(bench.Median(oneP50)), time.Duration(bench.Median(oneP99))
	s.manyP50, s.manyP99 = time.Duration(bench.Median(manyP50)), time.Duration(bench.Median(manyP99))
	s.rps, s.rss = bench.Median(rps), bench.Median(rss)
	return s
}

// toolVersions names the interpreters and toolchain that ran the contenders.
func toolVersions() string {
	var v []string
	for _, argv := range [][]string{{"python3", "--version"}, {"node", "--version"}, {"go", "version"}} {
		out, err := exec.Command(argv[0], argv[1:]...).Output() //nolint:noctx // Fixed commands.
		if err == nil {
			v = append(v, strings.TrimSpace(string(out)))
		}
	}
	return strings.Join(v, ", ")
}

// report writes a table per language, then how each wrapper stands against
// its floor and its peers.
func report(w io.Writer, contenders []*contender, s settings) {
	fmt.Fprintf(w, "\nRuntimes on loopback, echoing a %d-byte JSON body; %s; medians of %d rounds (%d cold starts and %s at each concurrency per round).\n",
		len(body), toolVersions(), s.rounds, s.colds, s.duration)
	byLanguage := map[string][]*contender{}
	var languages []string
	for _, c := range contenders {
		if byLanguage[c.language] == nil {
			languages = append(languages, c.language)
		}
		byLanguage[c.language] = append(byLanguage[c.language], c)
	}
	for _, lang := range languages {
		fmt.Fprintf(w, "\n%s\n", lang)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "runtime\trole\tcold start\tc=1 p50\tc=1 p99\tc=16 p50\tc=16 p99\treq/s c=16\terrors\tRSS")
		sums := map[*contender]summary{}
		var floor *contender
		for _, c := range byLanguage[lang] {
			if c.missing != "" {
				fmt.Fprintf(tw, "%s\t%s\tnot measured: %s\n", c.name, c.role, c.missing)
				continue
			}
			s := summaryOf(c)
			sums[c] = s
			if c.role == roleFloor {
				floor = c
			}
			many := fmt.Sprintf("%s\t%s\t%.0f", ms(s.manyP50), ms(s.manyP99), s.rps)
			if c.oneAtATime != "" {
				many = "—\t—\t—"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f MiB\n", c.name, c.role,
				ms(s.cold), ms(s.oneP50), ms(s.oneP99), many, s.errors, s.rss/(1<<20))
		}
		_ = tw.Flush()
		for _, c := range byLanguage[lang] {
			if c.oneAtATime != "" && c.missing == "" {
				fmt.Fprintf(w, "  %s: not at c=16: it %s.\n", c.name, c.oneAtATime)
			}
		}
		for _, c := range byLanguage[lang] {
			if c.role != roleOurs || c.missing != "" {
				continue
			}
			standing(w, c, sums, floor, byLanguage[lang])
		}
	}
}

// standing says how a wrapper stands against the floor (goal: within 1.5×
// in throughput and cold start) and each peer measured (goal: ahead).
func standing(w io.Writer, ours *contender, sums map[*contender]summary, floor *contender, all []*contender) {
	o := sums[ours]
	if floor != nil {
		f := sums[floor]
		fmt.Fprintf(w, "  %s: %.2f× the floor's throughput, %.2f× its cold start (goal: within 1.5×)\n", ours.name, o.rps/f.rps, float64(o.cold)/float64(f.cold))
	}
	for _, p := range all {
		if p.role != rolePeer || p.missing != "" {
			continue
		}
		s := sums[p]
		if p.oneAtATime != "" {
			fmt.Fprintf(w, "  %s against %s: %.2f× its c=1 p50, %.2f× its cold start\n",
				ours.name, p.name, float64(o.oneP50)/float64(s.oneP50), float64(o.cold)/float64(s.cold))
			continue
		}
		fmt.Fprintf(w, "  %s against %s: %.2f× its throughput, %.2f× its cold start, %.2f× its c=16 p99\n",
			ours.name, p.name, o.rps/s.rps, float64(o.cold)/float64(s.cold), float64(o.manyP99)/float64(s.manyP99))
	}
}

// ms writes a duration in milliseconds, to a tenth below 100.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v < 100 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}
