package source

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// direct is an HTTP client that reaches the test's servers on loopback.
func direct() *http.Client { return HTTPClient((&net.Dialer{}).DialContext) }

// peakHeap samples the heap while resolve runs and returns how far it grew.
func peakHeap(resolve func()) uint64 {
	var base, m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	resolve()
	close(done)
	if peak.Load() < base.HeapAlloc {
		return 0
	}
	return peak.Load() - base.HeapAlloc
}

// endlessS3 answers every ListObjectsV2 with a truncated page and a new
// continuation token, as a hostile or broken server may; keys says how many
// objects each page holds and pad how many bytes of XML comment pad it.
func endlessS3(keys, pad int) *httptest.Server {
	var page atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := page.Add(1)
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>functions</Name><Prefix>fns/</Prefix>`)
		fmt.Fprintf(&b, `<KeyCount>%d</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>page-%d</NextContinuationToken>`, keys, n)
		for i := range keys {
			fmt.Fprintf(&b, `<Contents><Key>fns/%d-%d.py</Key><ETag>"e"</ETag><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>`, n, i)
		}
		b.WriteString("<!--" + strings.Repeat("x", pad) + "-->")
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(b.String()))
	}))
}

// TestEndlessS3Listing lists an S3 prefix whose server never stops saying
// there is more. Before, the provider kept listing, and holding, for ever:
// 547 MiB in 8 s. It must stop at a limit, say which, and hold little.
func TestEndlessS3Listing(t *testing.T) {
	cases := map[string]struct {
		reason string
		keys   int
		pad    int
		want   string
	}{
		"Keys": {
			reason: "Full pages of new keys, for ever: the key limit stops it.",
			keys:   1000,
			want:   "more than 10000 objects under s3://functions/fns/",
		},
		"Bytes": {
			reason: "Empty pages padded to 256 KiB, for ever: the byte limit stops it.",
			pad:    256 << 10,
			want:   "more than 16777216 bytes",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := endlessS3(tc.keys, tc.pad)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 35*time.Second)
			defer cancel()
			var err error
			grew := peakHeap(func() {
				_, err = NewS3Resolver(direct()).Resolve(ctx, S3Location{Endpoint: srv.URL, Bucket: "functions", Prefix: "fns/", Region: "us-east-1"}, nil)
			})
			if !IsUnresolvable(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nResolve(...): %v; want a refusal naming the limit, %q", tc.reason, err, tc.want)
			}
			if grew > 64<<20 {
				t.Errorf("\n%s\nthe heap grew by %d MiB; want at most 64", tc.reason, grew>>20)
			}
		})
	}
}

// pkt is a git pkt-line.
func pkt(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// TestEndlessGitRefs asks a git server whose ref advertisement never ends.
func TestEndlessGitRefs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		_, _ = w.Write([]byte(pkt("# service=git-upload-pack\n") + "0000" + pkt(strings.Repeat("a", 40)+" HEAD\x00multi_ack\n")))
		for i := 0; r.Context().Err() == nil; i++ {
			var b strings.Builder
			for j := range 1000 {
				b.WriteString(pkt(fmt.Sprintf("%s refs/heads/branch-%d-%d\n", strings.Repeat("a", 40), i, j)))
			}
			if _, err := w.Write([]byte(b.String())); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Second)
	defer cancel()
	var err error
	grew := peakHeap(func() {
		_, err = NewGitResolver(direct()).Resolve(ctx, srv.URL+"/functions.git", "main", nil)
	})
	if !IsUnresolvable(err) || !strings.Contains(err.Error(), "more than 16777216 bytes") {
		t.Errorf("Resolve(...): %v; want a refusal naming the byte limit", err)
	}
	if grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB; want at most 64", grew>>20)
	}
}

// TestSlowSource asks a server that answers a byte at a time: the time limit
// stops it.
func TestSlowSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		_, _ = w.Write([]byte(pkt("# service=git-upload-pack\n") + "0000fff0"))
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("a")); err != nil {
				return
			}
			w.(http.Flusher).Flush() //nolint:forcetypeassert // httptest's writer flushes.
			time.Sleep(50 * time.Millisecond)
		}
	}))
	defer srv.Close()
	g := NewGitResolver(direct())
	g.limits.Time = time.Second
	_, err := g.Resolve(context.Background(), srv.URL+"/functions.git", "main", nil)
	if !IsUnresolvable(err) || !strings.Contains(err.Error(), "longer than the 1s") {
		t.Errorf("Resolve(...): %v; want a refusal naming the time limit", err)
	}
}

// TestCommitRefAsksTheServer resolves a full commit id. Before, it named
// itself without any request, so the build pod cloned from wherever the
// URL pointed, past the dialer; now its repository is asked, through the
// dialer, and a refused address is refused.
func TestCommitRefAsksTheServer(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	var asked []string
	lookup := func(_ context.Context, host string) ([]net.IPAddr, error) {
		asked = append(asked, host)
		return []net.IPAddr{{IP: net.ParseIP("169.254.169.254")}}, nil
	}
	dial := func(context.Context, string, string) (net.Conn, error) {
		t.Error("dialled an address the dialer refuses")
		return nil, fmt.Errorf("no")
	}
	g := NewGitResolver(HTTPClient(RefusingDialer(lookup, dial, Policy{})))
	id, err := g.Resolve(context.Background(), "https://git.attacker.example/functions.git", commit, nil)
	if err == nil || !strings.Contains(err.Error(), "refusing to connect to git.attacker.example (169.254.169.254)") {
		t.Errorf("Resolve(a commit at a metadata address): %q, %v; want the dialer's refusal", id, err)
	}
	if len(asked) == 0 {
		t.Error("the commit's repository was never looked up")
	}
}
