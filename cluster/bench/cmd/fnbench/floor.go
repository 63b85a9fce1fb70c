package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// The floor is what any function pays for this request and answer: gRPC
// decodes the request into Structs and encodes the answer. It serves ours'
// answer, built once, to every request; an echo of a desired state sent in
// the request would decode the answer too and set the floor higher.
const (
	floorName    = "floor (decode and encode only)"
	floorCommand = "floor"
	// floorPassesMetric counts the floor's requests, as passesMetric counts
	// ours'.
	floorPassesMetric = "fnbench_floor_passes_total"
)

// A floorFunction answers every request with the same answer.
type floorFunction struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	answer *fnv1.RunFunctionResponse
	passes prometheus.Counter
}

// RunFunction answers with the answer it holds.
func (f *floorFunction) RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	f.passes.Inc()
	return f.answer, nil
}

// floorContender is the floor as a contender: this program, serving the
// reference answer written to dir.
func floorContender(dir string, req *fnv1.RunFunctionRequest, ours *fnv1.RunFunctionResponse) (*contender, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(ours)
	if err != nil {
		return nil, err
	}
	answer := filepath.Join(dir, "floor-answer.pb")
	if err := os.WriteFile(answer, b, 0o600); err != nil {
		return nil, err
	}
	return &contender{
		name: floorName, bin: bin, args: []string{floorCommand, "--answer=" + answer},
		passes: floorPassesMetric, req: req, reference: ours,
	}, nil
}

// serveFloor serves the floor function until it is stopped.
func serveFloor(address, metrics, answerFile string) error {
	b, err := os.ReadFile(answerFile)
	if err != nil {
		return err
	}
	f := &floorFunction{
		answer: &fnv1.RunFunctionResponse{},
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: floorPassesMetric, Help: "Requests the floor function answered."}),
	}
	if err := proto.Unmarshal(b, f.answer); err != nil {
		return errors.Wrap(err, "cannot read the floor's answer")
	}
	prometheus.MustRegister(f.passes)
	// The SDK's server, as ours and the peers are served: its interceptors
	// are part of what every function pays.
	return function.Serve(f, function.Listen("tcp", address), function.Insecure(true), function.WithMetricsServer(metrics))
}
