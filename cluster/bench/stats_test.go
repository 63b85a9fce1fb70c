package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	cases := map[string]struct {
		reason  string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		"None":      {reason: "No samples have no percentile.", p: 50, want: 0},
		"One":       {reason: "Every percentile of one sample is that sample.", samples: ms(7), p: 99, want: 7 * time.Millisecond},
		"Median":    {reason: "The nearest rank median of 1..10 is 5.", samples: ms(10, 3, 5, 1, 2, 4, 6, 8, 7, 9), p: 50, want: 5 * time.Millisecond},
		"P99Of100":  {reason: "The 99th of 1..100 is 99, not the maximum.", samples: ms(seq(100)...), p: 99, want: 99 * time.Millisecond},
		"P99Of10":   {reason: "With fewer than 100 samples the 99th is the maximum.", samples: ms(seq(10)...), p: 99, want: 10 * time.Millisecond},
		"Unsorted":  {reason: "Samples are sorted first.", samples: ms(9, 1, 5), p: 100, want: 9 * time.Millisecond},
		"Untouched": {reason: "The 1st percentile of 3 samples is the smallest.", samples: ms(3, 2, 1), p: 1, want: 1 * time.Millisecond},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Percentile(tc.samples, tc.p)); diff != "" {
				t.Errorf("%s\nPercentile(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	cases := map[string]struct {
		reason string
		values []float64
		want   float64
	}{
		"None": {reason: "No values have a median of zero.", want: 0},
		"Odd":  {reason: "An odd count has a middle value.", values: []float64{5, 1, 3}, want: 3},
		"Even": {reason: "An even count takes the mean of the middle two.", values: []float64{4, 1, 3, 2}, want: 2.5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Median(tc.values)); diff != "" {
				t.Errorf("%s\nMedian(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}
