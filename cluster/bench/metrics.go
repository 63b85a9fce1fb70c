package bench

import (
	"context"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtScrape = "cannot scrape %s"
	errFmtStatus = "%s answered %s"
)

// Metrics are the metric families one scrape of a Prometheus endpoint read.
type Metrics map[string]*dto.MetricFamily

// Scrape reads the Prometheus text exposition at url.
func Scrape(ctx context.Context, c *http.Client, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtScrape, url)
	}
	rsp, err := c.Do(req)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtScrape, url)
	}
	defer rsp.Body.Close() //nolint:errcheck // Only read from.
	if rsp.StatusCode != http.StatusOK {
		return nil, errors.Errorf(errFmtStatus, url, rsp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(rsp.Body)
	return m, errors.Wrapf(err, errFmtScrape, url)
}

// Sum adds up the counter or gauge name over every series whose labels
// match; a nil match takes them all.
func (m Metrics) Sum(name string, match func(labels map[string]string) bool) float64 {
	var sum float64
	m.each(name, match, func(_ map[string]string, v float64) { sum += v })
	return sum
}

// SumBy is Sum for each value of the label by, which series without it
// count under "".
func (m Metrics) SumBy(name, by string, match func(labels map[string]string) bool) map[string]float64 {
	sums := map[string]float64{}
	m.each(name, func(labels map[string]string) bool { return match == nil || match(labels) },
		func(labels map[string]string, v float64) { sums[labels[by]] += v })
	return sums
}

// each calls fn with the labels and value of every series of the counter
// or gauge name whose labels match; a nil match takes them all, and fn is
// then given no labels.
func (m Metrics) each(name string, match func(labels map[string]string) bool, fn func(labels map[string]string, v float64)) {
	f, ok := m[name]
	if !ok {
		return
	}
	for _, s := range f.GetMetric() {
		var labels map[string]string
		if match != nil {
			labels = make(map[string]string, len(s.GetLabel()))
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if !match(labels) {
				continue
			}
		}
		switch {
		case s.GetCounter() != nil:
			fn(labels, s.GetCounter().GetValue())
		case s.GetGauge() != nil:
			fn(labels, s.GetGauge().GetValue())
		case s.GetUntyped() != nil:
			fn(labels, s.GetUntyped().GetValue())
		}
	}
}
