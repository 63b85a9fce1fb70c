package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	cetypes "github.com/cloudevents/sdk-go/v2/types"

	"github.com/knative-lambda/provider-knative-lambda/internal/relay"
)

// MaxBody is the largest event a relay carries.
const MaxBody = 16 << 20

// sendTimeout bounds one delivery to a target Broker; Knative retries the
// Trigger's delivery as its spec says.
const sendTimeout = 30 * time.Second

const (
	errNotEvent = "cannot read a CloudEvent"
	errHops     = "cannot read the " + relay.ExtensionHops + " extension"
	errRequest  = "cannot write the event to its target"
	errSend     = "cannot send the event to its target"
)

// A Relay forwards events to the Broker of each forward, by the forward's
// name in the request's path.
type Relay struct {
	// Targets are the addresses of the forwards' Brokers, by forward name.
	Targets map[string]string
	// MaxHops is the most forwards an event passes through.
	MaxHops int32
	// Client sends the events.
	Client *http.Client
	// Log records dropped and failed events.
	Log *slog.Logger
}

// ServeHTTP forwards one event. It answers with the target's status, so the
// Trigger retries what the target refused, and 200 for an event it drops:
// a cycle's event is not an error to retry.
func (r Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	forward, ok := strings.CutPrefix(req.URL.Path, relay.PathPrefix)
	target, known := r.Targets[forward]
	if !ok || !known || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, MaxBody)
	ev, err := cehttp.NewEventFromHTTPRequest(req)
	if err != nil {
		r.Log.Info(errNotEvent, "forward", forward, "error", err)
		http.Error(w, errNotEvent, http.StatusBadRequest)
		return
	}
	hops, err := Hops(ev.Extensions()[relay.ExtensionHops])
	if err != nil || hops >= r.MaxHops {
		// A count the relay did not write is treated as spent: whoever set
		// it could otherwise restart a cycle's count.
		r.Log.Info("dropped an event at the hop limit", "forward", forward, "id", ev.ID(), "type", ev.Type(), "source", ev.Source(), "hops", ev.Extensions()[relay.ExtensionHops], "max", r.MaxHops)
		w.WriteHeader(http.StatusOK)
		return
	}
	ev.SetExtension(relay.ExtensionHops, hops+1)
	ctx, cancel := context.WithTimeout(req.Context(), sendTimeout)
	defer cancel()
	out, err := cehttp.NewHTTPRequestFromEvent(ctx, target, *ev)
	if err != nil {
		r.Log.Info(errRequest, "forward", forward, "id", ev.ID(), "error", err)
		http.Error(w, errRequest, http.StatusBadRequest)
		return
	}
	resp, err := r.Client.Do(out) //nolint:gosec // G704: the target is one render set from the Broker's reported address, never from the request.
	if err != nil {
		r.Log.Info(errSend, "forward", forward, "id", ev.ID(), "error", err)
		http.Error(w, errSend, http.StatusBadGateway)
		return
	}
	defer resp.Body.Close() //nolint:errcheck // Read to the end; nothing is left to report.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxBody))
	w.WriteHeader(resp.StatusCode)
}

// Hops reads a hop count as an event carries it: absent is none.
func Hops(v any) (int32, error) {
	if v == nil {
		return 0, nil
	}
	n, err := cetypes.ToInteger(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %v is not a count", errHops, v)
	}
	return n, nil
}
