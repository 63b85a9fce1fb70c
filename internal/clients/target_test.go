package clients

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// hostileTarget serves what a team's kubeconfig may point the provider at,
// over TLS on loopback, and returns the kubeconfig naming it under path.
func hostileTarget(t *testing.T, path string, h http.HandlerFunc) []byte {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + srv.URL + path + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`)
}

// connect makes a target client of kc as the provider does, dialling
// loopback.
func connect(t *testing.T, kc []byte) error {
	t.Helper()
	rc, err := TargetConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultConnectTimeout)
	defer cancel()
	run, stop := context.WithCancel(context.Background())
	defer stop()
	_, err = TargetClients(manager{}, Owned{}, logging.NewNopLogger())(ctx, run, rc)
	return err
}

// TestTargetAnswerIsBounded plays a team's target whose /version answers
// without end. Before, the provider read all of it: 256 MiB grew its heap
// to 1,150 MiB. Now it reads at most DefaultTargetResponseBytes of one
// answer and says so.
func TestTargetAnswerIsBounded(t *testing.T) {
	var sent atomic.Int64
	kc := hostileTarget(t, "", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(`{"gitVersion":"` + strings.Repeat("v", 1<<20))
		for sent.Load() < 256<<20 {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	err := connect(t, kc)
	if err == nil || !strings.Contains(err.Error(), "the target cluster's answer to /version came to more than 67108864 bytes") {
		t.Errorf("connect: %v; want the answer refused past its budget", err)
	}
	if n := sent.Load(); n >= 256<<20 {
		t.Errorf("the target sent all of its %d bytes; want the provider to stop reading", n)
	}
}

// TestTargetBodyNeverInError plays a kubeconfig whose server is a page of
// the provider's network that is not a Kubernetes API server. Before, the
// provider GET its /version and copied the answer into the resource's
// Synced condition, where the team read a planted db_password. Now what
// such a server answers never reaches an error.
func TestTargetBodyNeverInError(t *testing.T) {
	const planted = "db_password=7f3a9c41e2b84d06"
	cases := map[string]struct {
		reason string
		status int
		want   string
	}{
		"OK": {reason: "An admin page that answers 200 is not a version.", status: http.StatusOK, want: errNotKubernetes},
		"Error": {
			reason: "An error page is said by its status code alone.", status: http.StatusInternalServerError,
			want: "cannot reach the target cluster's API server: the server answered HTTP 500",
		},
		"Forbidden": {
			reason: "An answer shaped as a Kubernetes Status is said by its code alone too.", status: http.StatusForbidden,
			want: "the server answered HTTP 403",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Value
			kc := hostileTarget(t, "/admin/debug", func(w http.ResponseWriter, r *http.Request) {
				asked.Store(r.URL.Path)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte("<html>" + planted + "</html>"))
			})
			err := connect(t, kc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nconnect: %v; want %q", tc.reason, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), planted) {
				t.Errorf("\n%s\nthe error holds what the server answered: %v", tc.reason, err)
			}
			if got, _ := asked.Load().(string); got != "/admin/debug/version" {
				t.Errorf("the server was asked for %q; want /admin/debug/version, so that the test plays the finding", got)
			}
		})
	}
}

// TestTargetRequestIsBounded plays a target that takes a request and never
// answers: the request ends at its timeout with an error saying so.
func TestTargetRequestIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	c := &http.Client{Transport: boundTargets(100*time.Millisecond, 1<<10)(http.DefaultTransport)}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1/pods", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer /api/v1/pods within 100ms") {
		t.Errorf("GET: %v; want the request ended at its timeout", err)
	}
}
