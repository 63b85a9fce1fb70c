package monitoring

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// An Owner is the process that exports a metric.
type Owner string

// The owners of the kit's metrics.
const (
	// Provider is provider-knative-lambda: its own lambda_ metrics and
	// controller-runtime's reconcile and work queue metrics.
	Provider Owner = "provider"
	// Function is function-knative-lambda.
	Function Owner = "function"
	// QueueProxy is the queue-proxy Knative runs beside each workload.
	QueueProxy Owner = "queue-proxy"
	// Prometheus is Prometheus itself, which records each scrape's up.
	Prometheus Owner = "prometheus"
)

// OwnerOf is the owner of a metric name, or "" when it is no known
// process's.
func OwnerOf(name string) Owner {
	switch {
	case strings.HasPrefix(name, "lambda_function_"):
		return Function
	case strings.HasPrefix(name, "lambda_"), strings.HasPrefix(name, "controller_runtime_"), strings.HasPrefix(name, "workqueue_"):
		return Provider
	case strings.HasPrefix(name, "kn_serving_"):
		return QueueProxy
	case name == "up":
		return Prometheus
	}
	return ""
}

const (
	errScrapeFmt = "cannot scrape %s"
	errStatusFmt = "scraping %s answered %s"
)

// Scrape reads the metric names a /metrics endpoint exports, as PromQL
// selects them: a histogram's _bucket, _sum and _count series, every other
// family by its name.
func Scrape(ctx context.Context, url string) (map[string]bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, errors.Wrapf(err, errScrapeFmt, url)
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, errors.Wrapf(err, errScrapeFmt, url)
	}
	defer rsp.Body.Close() //nolint:errcheck // Read to the end; nothing to report.
	if rsp.StatusCode != http.StatusOK {
		return nil, errors.Errorf(errStatusFmt, url, rsp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(rsp.Body)
	if err != nil {
		return nil, errors.Wrapf(err, errScrapeFmt, url)
	}
	names := map[string]bool{}
	for name, f := range families {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		case dto.MetricType_SUMMARY:
			for _, s := range []string{"", "_sum", "_count"} {
				names[name+s] = true
			}
		case dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_UNTYPED:
			names[name] = true
		}
	}
	return names, nil
}

// Unexported lists the names of an owner the kit in dir uses that the
// /metrics endpoint at url does not serve, each with the places that use it.
func Unexported(ctx context.Context, dir string, o Owner, url string) ([]string, error) {
	exported, err := Scrape(ctx, url)
	if err != nil {
		return nil, err
	}
	qs, err := Load(dir)
	if err != nil {
		return nil, err
	}
	used, err := Names(qs)
	if err != nil {
		return nil, err
	}
	return Missing(used, o, exported), nil
}

// Missing lists the names of an owner the kit uses that it does not
// export, each with the places that use it.
func Missing(used map[string][]string, o Owner, exported map[string]bool) []string {
	var missing []string
	for name, where := range used {
		if OwnerOf(name) == o && !exported[name] {
			missing = append(missing, fmt.Sprintf("%s (used by %s)", name, strings.Join(where, ", ")))
		}
	}
	sort.Strings(missing)
	return missing
}
