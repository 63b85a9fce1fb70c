package monitoring

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"knative.dev/pkg/observability/metrics"
	"knative.dev/serving/pkg/queue"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
)

// kit is the repository's monitoring kit.
var kit = filepath.Join("..", "..", Dir)

// TestKitNamesHaveOwners parses the shipped rules and dashboard with
// Prometheus's parsers and checks that every metric they use belongs to a
// process whose test holds the name to what it exports.
func TestKitNamesHaveOwners(t *testing.T) {
	qs, err := Load(kit)
	if err != nil {
		t.Fatal(err)
	}
	names, err := Names(qs)
	if err != nil {
		t.Fatal(err)
	}
	owned := map[Owner]int{}
	for n, where := range names {
		o := OwnerOf(n)
		if o == "" {
			t.Errorf("%s (used by %s) is no known process's metric", n, strings.Join(where, ", "))
		}
		owned[o]++
	}
	// The kit covers each part: an owner none of its queries use would
	// leave that part unwatched.
	for _, o := range []Owner{Provider, Function, QueueProxy, Prometheus} {
		if owned[o] == 0 {
			t.Errorf("the kit uses no metric of the %s", o)
		}
	}
}

// TestQueueProxyExportsKitNames runs the request metrics of Knative's
// queue-proxy, its own handler and its own Prometheus exporter as
// config-observability's request-metrics-protocol: prometheus sets them up,
// sends requests through them, and checks that every queue-proxy metric the
// kit uses is in what its /metrics serves.
func TestQueueProxyExportsKitNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	endpoint := loopback.Address(t)
	mp, err := metrics.NewMeterProvider(ctx, metrics.Config{Protocol: metrics.ProtocolPrometheus, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(ctx) //nolint:errcheck // The test is over.
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	h, err := queue.NewAppRequestMetricsHandler(mp, app, queue.NewBreaker(queue.BreakerParams{QueueDepth: 10, MaxConcurrency: 1, InitialCapacity: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/fail"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(t.Context(), http.MethodPost, p, nil))
	}

	url := "http://" + endpoint + "/metrics"
	waitUp(ctx, t, url)
	missing, err := Unexported(ctx, kit, QueueProxy, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("the kit uses queue-proxy metrics Knative does not export:\n%s", strings.Join(missing, "\n"))
	}
}

// waitUp waits until a metrics server that starts in the background
// answers.
func waitUp(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	for {
		_, err := Scrape(ctx, url)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered: %v", url, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestNames(t *testing.T) {
	cases := map[string]struct {
		reason  string
		queries []Query
		want    map[string][]string
		wantErr bool
	}{
		"SelectorsAndMatchers": {
			reason: "Every selector's metric counts, by name or __name__, with each place that uses it.",
			queries: []Query{
				{Where: "a", Expr: `rate(x_total[5m]) / on() group_left {__name__="y"}`},
				{Where: "b", Expr: `x_total`},
			},
			want: map[string][]string{"x_total": {"a", "b"}, "y": {"a"}},
		},
		"GrafanaVariables": {
			reason:  "Dashboard variables become a range or a label value, so the query parses.",
			queries: []Query{{Where: "p", Expr: `sum(rate(x{ns=~"$namespace", l="${lambda:regex}"}[$__rate_interval]))`}},
			want:    map[string][]string{"x": {"p"}},
		},
		"Invalid": {
			reason:  "A query PromQL cannot parse is an error.",
			queries: []Query{{Where: "p", Expr: `sum(rate(x[5m])`}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Names(tc.queries)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nNames(...): error %v, want error %t", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nNames(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestScrape(t *testing.T) {
	r := prometheus.NewRegistry()
	r.MustRegister(
		prometheus.NewCounter(prometheus.CounterOpts{Name: "a_total", Help: "a"}),
		prometheus.NewHistogram(prometheus.HistogramOpts{Name: "b_seconds", Help: "b"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "c", Help: "c"}),
	)
	srv := httptest.NewServer(promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
	defer srv.Close()

	got, err := Scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a_total": true, "b_seconds_bucket": true, "b_seconds_sum": true, "b_seconds_count": true, "c": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scrape(...): -want, +got:\n%s", diff)
	}
}

func TestMissing(t *testing.T) {
	used := map[string][]string{
		"lambda_builds_total":        {"p"},
		"lambda_gone_total":          {"p", "q"},
		"lambda_function_gone_total": {"r"},
		"kn_serving_gone":            {"r"},
	}
	exported := map[string]bool{"lambda_builds_total": true}
	want := []string{"lambda_gone_total (used by p, q)"}
	if diff := cmp.Diff(want, Missing(used, Provider, exported)); diff != "" {
		t.Errorf("Missing(...): only the provider's unexported names: -want, +got:\n%s", diff)
	}
}
