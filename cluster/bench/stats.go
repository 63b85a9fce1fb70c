package bench

import (
	"slices"
	"time"
)

// Percentile is the p-th percentile (0 < p ≤ 100) of samples by the nearest
// rank method, so it is always one of the samples. Zero when there are none.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// Median is the middle of values: the mean of the two middle ones when there
// is an even number of them.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
