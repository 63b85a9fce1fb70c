// Command relay serves an agent's forwards: each event a forward's Trigger
// delivers is counted and sent on to the forward's Broker, as package
// internal/relay says. render runs it as a Knative Service beside an agent
// that forwards, and sets its environment.
//
// It wraps errors with fmt rather than crossplane-runtime's errors, which
// would link Kubernetes' machinery into a binary every forwarding agent's
// pod starts: a relay is a third of the size without it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/internal/relay"
)

// EnvPort is the port Knative tells the container to listen on.
const EnvPort = "PORT"

const (
	errTargets = "cannot read " + relay.EnvTargets
	errMaxHops = "cannot read " + relay.EnvMaxHops
	errListen  = "cannot listen"
)

// drain is how long requests in flight get to finish once Knative asks the
// pod to stop.
const drain = 30 * time.Second

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("relay stopped", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	r := Relay{Client: &http.Client{}, Log: log}
	if err := json.Unmarshal([]byte(os.Getenv(relay.EnvTargets)), &r.Targets); err != nil {
		return fmt.Errorf("%s: %w", errTargets, err)
	}
	hops, err := strconv.ParseInt(os.Getenv(relay.EnvMaxHops), 10, 32)
	if err != nil || hops < 1 {
		return fmt.Errorf("%s: %q is not a positive count", errMaxHops, os.Getenv(relay.EnvMaxHops))
	}
	r.MaxHops = int32(hops)
	port := os.Getenv(EnvPort)
	if port == "" {
		port = "8080"
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", ":"+port)
	if err != nil {
		return fmt.Errorf("%s: %w", errListen, err)
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	log.Info("relaying", "forwards", len(r.Targets), "maxHops", r.MaxHops, "port", port)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	return srv.Shutdown(shutdown)
}
