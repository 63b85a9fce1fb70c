// Command fnbench measures this composition function against
// function-go-templating and function-patch-and-transform: each runs as a
// real gRPC server on loopback and is sent the same observed state over and
// over, warm. The request is encoded once and each answer timed as it
// arrives, not decoded: the time is the function's and gRPC's, not this
// program's own conversions. The functions of a round run at once and take
// turns every few requests, so that a slower spell of the machine falls on
// all of them alike. It prints latency percentiles, CPU time and
// allocations per request, and resident memory.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"google.golang.org/protobuf/encoding/protojson"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// requestFile is the request the fn package's own benchmark sends.
const requestFile = "fn/testdata/bench/request.json"

func main() {
	var (
		app      = kingpin.New("fnbench", "Measure function-knative-lambda against function-go-templating and function-patch-and-transform.")
		requests = app.Flag("requests", "Requests measured per round and function.").Default("2000").Int()
		warmup   = app.Flag("warmup", "Requests sent first and not measured.").Default("200").Int()
		rounds   = app.Flag("rounds", "Rounds, each of every function started afresh; the summary gives medians.").Default("5").Int()
		block    = app.Flag("block", "Requests a function is sent before the next takes its turn.").Default("50").Int()
		peers    = app.Flag("peers", "Folder of the peers' binaries.").Default(".cache/peers").String()

		_     = app.Command("measure", "Measure the functions.").Default()
		floor = app.Command(floorCommand, "Serve the floor function; fnbench starts it.").Hidden()
		addr  = floor.Flag("address", "Address of the gRPC server.").Required().String()
		mAddr = floor.Flag("metrics-address", "Address of the Prometheus endpoint.").Required().String()
		ans   = floor.Flag("answer", "File of the answer, in protobuf.").Required().String()
	)
	if kingpin.MustParse(app.Parse(os.Args[1:])) == floor.FullCommand() {
		kingpin.FatalIfError(serveFloor(*addr, *mAddr, *ans), "cannot serve the floor")
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, *requests, *warmup, *rounds, *block, *peers); err != nil {
		fmt.Fprintln(os.Stderr, "fnbench:", err)
		os.Exit(1)
	}
}

func measure(ctx context.Context, requests, warmup, rounds, block int, peers string) error {
	root, err := local.ModuleRoot(ctx, ".")
	if err != nil {
		return err
	}
	bin, err := process.Build(ctx, root, "function-knative-lambda", "./fn")
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(root, requestFile))
	if err != nil {
		return err
	}
	req := &fnv1.RunFunctionRequest{}
	if err := protojson.Unmarshal(b, req); err != nil {
		return err
	}
	ours := &contender{
		name:   "function-knative-lambda",
		bin:    bin,
		args:   []string{"--insecure"},
		passes: passesMetric,
		req:    req,
	}
	if ours.reference, err = ours.probe(ctx); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fnbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // Best effort.
	floor, err := floorContender(tmp, req, ours.reference)
	if err != nil {
		return err
	}
	var peerContenders []*contender
	if !filepath.IsAbs(peers) {
		peers = filepath.Join(root, peers)
	}
	for _, p := range []peer{goTemplating, patchAndTransform} {
		c, err := p.contender(peers, req, ours.reference)
		if err != nil {
			return err
		}
		if c.skip != "" {
			fmt.Printf("%s: %s\n", c.name, c.skip)
		}
		peerContenders = append(peerContenders, c)
	}
	var contenders []*contender
	for _, c := range append([]*contender{ours, floor}, peerContenders...) {
		if c.skip == "" {
			contenders = append(contenders, c)
		}
	}
	fmt.Printf("fnbench: %d rounds of %d requests after %d to warm up, one at a time over one connection, the functions taking turns every %d\n", rounds, requests, warmup, block)
	for round := range rounds {
		if err := measureRound(ctx, contenders, warmup, requests, block); err != nil {
			return err
		}
		for _, c := range contenders {
			fmt.Printf("round %d  %-36s %s\n", round+1, c.name, c.results[len(c.results)-1])
		}
	}
	summarise(os.Stdout, ours, floor, peerContenders)
	return nil
}

// measureRound starts every contender, sends each block requests in turn,
// the first in turn moving along each time, until each has been sent
// requests, and adds each one's result.
func measureRound(ctx context.Context, contenders []*contender, warmup, requests, block int) error {
	sessions := make([]*session, 0, len(contenders))
	defer func() {
		for _, s := range sessions {
			s.stop()
		}
	}()
	for _, c := range contenders {
		s, err := c.begin(ctx, warmup)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		sessions = append(sessions, s)
	}
	for turn, sent := 0, 0; sent < requests; turn, sent = turn+1, sent+block {
		for i := range sessions {
			if err := sessions[(turn+i)%len(sessions)].measure(ctx, min(block, requests-sent)); err != nil {
				return err
			}
		}
	}
	// Each session leaves the list before it ends, and end stops it: the
	// deferred stop is for those an error leaves behind.
	for len(sessions) > 0 {
		s := sessions[0]
		sessions = sessions[1:]
		r, err := s.end(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.c.name, err)
		}
		s.c.results = append(s.c.results, r)
	}
	return nil
}
