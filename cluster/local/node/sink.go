package node

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"knative.dev/pkg/apis"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A Received is what a Sink got of one event.
type Received struct {
	Type, Source, Body string
	// ErrorCode is the status a subscriber answered for a dead letter.
	ErrorCode string
	// Hops is how many forwards the event passed through.
	Hops string
}

// A Sink records the CloudEvents it gets, at URL.
type Sink struct {
	URL *apis.URL
	Got <-chan Received
}

// RecordingSink serves on the host's end of the node's link, which pods
// reach, and records each event it gets, until the test ends.
func RecordingSink(t testing.TB) *Sink {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", HostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Received, 64)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- Received{Type: r.Header.Get("Ce-Type"), Source: r.Header.Get("Ce-Source"), Body: string(body), ErrorCode: r.Header.Get("Ce-Knativeerrorcode"), Hops: r.Header.Get("Ce-" + render.ExtensionHops)}:
		default: // A loop's events past what the test reads.
		}
		w.WriteHeader(http.StatusAccepted)
	})}
	go srv.Serve(l) //nolint:errcheck // Ends when the test closes it.
	t.Cleanup(func() { _ = srv.Close() })
	return &Sink{URL: &apis.URL{Scheme: "http", Host: l.Addr().String(), Path: "/"}, Got: got}
}
