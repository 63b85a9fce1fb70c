package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exposition = `# TYPE apiserver_request_total counter
apiserver_request_total{verb="GET",resource="services"} 7
apiserver_request_total{verb="LIST",resource="services"} 2
apiserver_request_total{verb="PATCH",resource="services"} 3
apiserver_request_total{verb="PUT",resource="leases"} 40
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total 1234
`

// TestScrapeAndSum serves a Prometheus text exposition over HTTP, so the
// parse is the real one, and sums series by their labels.
func TestScrapeAndSum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, exposition)
	}))
	defer srv.Close()
	m, err := Scrape(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	notLeases := func(l map[string]string) bool { return l["resource"] != "leases" }
	reads := func(l map[string]string) bool { return l["verb"] == "GET" || l["verb"] == "LIST" }
	got := map[string]float64{
		"all":        m.Sum("apiserver_request_total", nil),
		"not leases": m.Sum("apiserver_request_total", notLeases),
		"reads":      m.Sum("apiserver_request_total", reads),
		"mallocs":    m.Sum("go_memstats_mallocs_total", nil),
		"absent":     m.Sum("no_such_metric", nil),
	}
	want := map[string]float64{"all": 52, "not leases": 12, "reads": 9, "mallocs": 1234, "absent": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sum: -want, +got:\n%s", diff)
	}
	byVerb := m.SumBy("apiserver_request_total", "verb", notLeases)
	if diff := cmp.Diff(map[string]float64{"GET": 7, "LIST": 2, "PATCH": 3}, byVerb); diff != "" {
		t.Errorf("SumBy verb: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"": 1234}, m.SumBy("go_memstats_mallocs_total", "verb", nil)); diff != "" {
		t.Errorf("SumBy of a series without the label: -want, +got:\n%s", diff)
	}
}

func TestScrapeRefusesErrorStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer srv.Close()
	if _, err := Scrape(context.Background(), srv.Client(), srv.URL); err == nil {
		t.Error("Scrape of a 403: no error")
	}
}
