package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// measured is a run of n functions that converged in seconds, with requests
// API requests and reconciles reconciles until Ready, and steadyMiB of RSS
// and liveMiB of live heap at rest (negative: not known).
func measured(contender string, n int, inline bool, seconds, requests, reconciles, steadyMiB, liveMiB float64) *result {
	return &result{
		contender:          contender,
		setting:            setting{n: n, inline: inline},
		converged:          time.Duration(seconds * float64(time.Second)),
		convergeRequests:   requests,
		convergeReconciles: map[string]float64{"requeue_after": reconciles},
		steadyRSS:          uint64(steadyMiB * mib),
		steadyLive:         liveMiB * mib,
	}
}

func TestPerFunction(t *testing.T) {
	cases := map[string]struct {
		reason  string
		results []*result
		want    []string
	}{
		"OneSize": {
			reason:  "A size with none smaller has nothing to be a multiple of.",
			results: []*result{measured(oursName, 2000, false, 40, 25000, 4000, 90, 30)},
			want:    []string{"| provider-knative-lambda | 2000 | image | 20.0 | 12.5 | 2.00 | 90 | n/a | n/a | n/a | n/a |"},
		},
		"TwoSizes": {
			reason: "At 10,000 each function's converge time and requests are given as a multiple of those at 2,000, and each function added its share of the memory at rest.",
			results: []*result{
				measured(oursName, 10000, false, 250, 130000, 30000, 90+8000*10.0/1024, 30+8000*5.0/1024),
				measured(oursName, 2000, false, 40, 25000, 4000, 90, 30),
			},
			want: []string{
				"| provider-knative-lambda | 2000 | image | 20.0 | 12.5 | 2.00 | 90 | n/a | n/a | n/a | n/a |",
				"| provider-knative-lambda | 10000 | image | 25.0 | 13.0 | 3.00 | 168 | 1.25× (from N=2000) | 1.04× (from N=2000) | 10.0 (from N=2000) | 5.0 (from N=2000) |",
			},
		},
		"EachOwnSizes": {
			reason: "Each provider and source is a multiple of its own smaller size only, and live heap a provider does not report stays unknown.",
			results: []*result{
				measured(oursName, 1000, true, 70, 29000, 5600, 113, 40),
				measured(oursName, 2000, false, 40, 25000, 4000, 90, 30),
				measured(peerName, 2000, false, 130, 48000, 8000, 213, -1),
				measured(peerName, 10000, false, 1230, 389000, 91000, 860, -1),
			},
			want: []string{
				"| provider-knative-lambda | 1000 | inline | 70.0 | 29.0 | 5.60 | 113 | n/a | n/a | n/a | n/a |",
				"| provider-knative-lambda | 2000 | image | 20.0 | 12.5 | 2.00 | 90 | n/a | n/a | n/a | n/a |",
				"| provider-kubernetes | 2000 | image | 65.0 | 24.0 | 4.00 | 213 | n/a | n/a | n/a | n/a |",
				"| provider-kubernetes | 10000 | image | 123.0 | 38.9 | 9.10 | 860 | 1.89× (from N=2000) | 1.62× (from N=2000) | 82.8 (from N=2000) | n/a |",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			groups := grouped(tc.results)
			var b strings.Builder
			perFunction(&b, sortedKeys(groups), groups)
			got := strings.Split(strings.TrimSpace(b.String()), "\n")[2:]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nperFunction(...) rows: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFirstJob(t *testing.T) {
	built := func(n int, p50, p99 time.Duration) *result {
		r := measured(oursName, n, true, 70, 29000, 5600, 113, 40)
		r.jobP50, r.jobP99 = p50, p99
		return r
	}
	cases := map[string]struct {
		reason  string
		results []*result
		want    string
	}{
		"NoBuilds": {
			reason:  "Runs of prebuilt images have no build Job, and print no table.",
			results: []*result{measured(oursName, 2000, false, 40, 25000, 4000, 90, 30)},
		},
		"Medians": {
			reason: "Each size of inline builds gives the medians of its runs' percentiles.",
			results: []*result{
				built(1000, 7*time.Second, 9*time.Second),
				built(1000, 8*time.Second, 12*time.Second),
				built(1000, 9*time.Second, 10*time.Second),
				measured(oursName, 2000, false, 40, 25000, 4000, 90, 30),
			},
			want: "| provider | N | create to build Job: p50 | p99 |\n|---|---|---|---|\n| provider-knative-lambda | 1000 | 8s | 10s |",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			groups := grouped(tc.results)
			var b strings.Builder
			firstJob(&b, sortedKeys(groups), groups)
			if diff := cmp.Diff(tc.want, strings.TrimSpace(b.String())); diff != "" {
				t.Errorf("%s\nfirstJob(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
