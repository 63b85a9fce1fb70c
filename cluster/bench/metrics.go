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
	f, ok := m[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, s := range f.GetMetric() {
		if match != nil {
			labels := make(map[string]string, len(s.GetLabel()))
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if !match(labels) {
				continue
			}
		}
		switch {
		case s.GetCounter() != nil:
			sum += s.GetCounter().GetValue()
		case s.GetGauge() != nil:
			sum += s.GetGauge().GetValue()
		case s.GetUntyped() != nil:
			sum += s.GetUntyped().GetValue()
		}
	}
	return sum
}
