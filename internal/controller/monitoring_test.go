package controller_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/knative-lambda/provider-knative-lambda/internal/monitoring"
)

// TestProviderExportsKitNames builds a function to Ready with the provider
// wired as cmd/provider wires it, scrapes the registry its metrics endpoint
// serves, and checks that every provider metric the monitoring kit's alerts
// and dashboard use is there: renaming one on either side fails here.
func TestProviderExportsKitNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "monitoring", keep)

	fn := newFunction(ns, "watched", "def handler(event):\n    return event\n")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	buildToReady(ctx, t, c, fn)

	srv := httptest.NewServer(promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	missing, err := monitoring.Unexported(ctx, filepath.Join("..", "..", monitoring.Dir), monitoring.Provider, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("the monitoring kit uses provider metrics the provider does not export:\n%s", strings.Join(missing, "\n"))
	}
}
