package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// benchRequest is the request BenchmarkServeRunFunction serves, and which
// cluster/bench/cmd/fnbench sends over gRPC to this function and its peers.
const benchRequest = "testdata/bench/request.json"

// builtRequest is one Direct pass over a Lambda whose build has just
// succeeded: the pass reads the Job and its pod, renders twice and returns
// all five kinds of object (ConfigMap, Job, Broker, Service, Trigger) with
// the XR's status and conditions.
func builtRequest(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	spec := parseSpec(t, helloSpec)
	building := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}})
	return &fnv1.RunFunctionRequest{
		Input: codectest.Struct(t, testInput),
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, helloSpec, ""))},
			Resources: map[string]*fnv1.Resource{
				"Job/" + building.BuildJob.Name:                     {Resource: jobWithStatus(t, building.BuildJob, finished(batchv1.JobComplete))},
				"ConfigMap/" + building.BuildContext.Name:           {Resource: toStruct(t, building.BuildContext)},
				"NetworkPolicy/" + building.BuildNetworkPolicy.Name: {Resource: toStruct(t, building.BuildNetworkPolicy)},
				"Broker/events": {Resource: readyStruct(t, building.Broker)},
			},
		},
		RequiredResources: map[string]*fnv1.Resources{"build-pods": {Items: []*fnv1.Resource{{Resource: podTerminated(t, building.BuildJob.Name, 0, testDigest)}}}},
	}
}

// TestBenchRequest keeps the request file the gRPC benchmark sends equal to
// the one this package builds, and checks it yields all six objects.
func TestBenchRequest(t *testing.T) {
	req := builtRequest(t)
	got, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if !*update {
		// protojson's output is not stable byte for byte: compare messages.
		b, err := os.ReadFile(benchRequest)
		if err != nil {
			t.Fatalf("%v: run go test ./fn -run TestBenchRequest -update to write it", err)
		}
		want := &fnv1.RunFunctionRequest{}
		if err := protojson.Unmarshal(b, want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, req, protocmp.Transform()); diff != "" {
			t.Errorf("%s is stale (run go test ./fn -run TestBenchRequest -update): -file, +built:\n%s", benchRequest, diff)
		}
	} else if err := os.WriteFile(benchRequest, append(got, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
	rsp, err := run(t, f, req)
	if err != nil || len(rsp.GetDesired().GetResources()) != 6 {
		t.Fatalf("RunFunction: %v, %d desired resources, want 6", err, len(rsp.GetDesired().GetResources()))
	}
}

// BenchmarkServeRunFunction serves the pass of builtRequest as the gRPC
// server does, without the transport: the request read from its encoding
// by the function server's codec, the pass with its lease, the answer
// written.
func BenchmarkServeRunFunction(b *testing.B) {
	wire, err := proto.Marshal(builtRequest(b))
	if err != nil {
		b.Fatal(err)
	}
	p := newFastPath(&Function{log: logging.NewNopLogger(), sources: noSources(b)})
	b.ReportAllocs()
	for b.Loop() {
		out, err := p.serve(wire)
		if err != nil {
			b.Fatal(err)
		}
		out.Free()
	}
}

// BenchmarkRunFunctionGRPC sends the same pass through a gRPC server on
// loopback, as Crossplane does and with leases as the function's server
// has them: the request's and the response's protobuf encoding is part of
// every call.
func BenchmarkRunFunctionGRPC(b *testing.B) {
	c := fnv1.NewFunctionRunnerServiceClient(serveGRPC(b, &Function{log: logging.NewNopLogger(), sources: noSources(b)}, &codec.Leases{}))
	req := builtRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.RunFunction(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProtobufCodec times the four protobuf conversions of one call
// that fnbench times, for this request and this function's answer. The
// caller's two are the same for every function fnbench measures, and the
// floor pays the function's two with gRPC's own codec: together they say
// how much of the floor is left for any function to be faster than.
func BenchmarkProtobufCodec(b *testing.B) {
	req := builtRequest(b)
	rsp, err := run(b, &Function{log: logging.NewNopLogger(), sources: noSources(b)}, req)
	if err != nil {
		b.Fatal(err)
	}
	wire := map[string][]byte{}
	for name, m := range map[string]proto.Message{"request": req, "answer": rsp} {
		if wire[name], err = proto.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
	encode := func(m proto.Message) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := proto.Marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	decode := func(wire []byte, m func() proto.Message) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := proto.Unmarshal(wire, m()); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	// The floor encodes the answer as it serves it: decoded from its
	// encoding, as fnbench hands it over.
	answer := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(wire["answer"], answer); err != nil {
		b.Fatal(err)
	}
	b.Run("caller-encodes-request", encode(req))
	b.Run("floor-decodes-request", decode(wire["request"], func() proto.Message { return &fnv1.RunFunctionRequest{} }))
	b.Run("floor-encodes-answer", encode(answer))
	b.Run("caller-decodes-answer", decode(wire["answer"], func() proto.Message { return &fnv1.RunFunctionResponse{} }))
}

// BenchmarkResourceOf parses the JSON render lends for the objects of
// builtRequest's pass into the answer's encoding, as lend does: the build
// context's code and wrapper are most of its bytes.
func BenchmarkResourceOf(b *testing.B) {
	spec := parseSpec(b, helloSpec)
	var docs [][]byte
	keep := func(_ kube.Object, json []byte, _ []render.Verbatim) error {
		docs = append(docs, bytes.Clone(json))
		return nil
	}
	if _, err := render.FunctionEncoded(render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}}, keep); err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	p := &codec.Parser{}
	for b.Loop() {
		for _, d := range docs {
			if _, err := p.ResourceOf(d, sentKey, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkObservedAs reads an observed Knative Service as a cluster
// supplies it, with Knative's annotations, an owner and the managed fields
// of two writers, into the typed Service: with its metadata whole, as
// observedAs read it before, and as it reads it.
func BenchmarkObservedAs(b *testing.B) {
	data, err := os.ReadFile("testdata/bench/observed-service.json")
	if err != nil {
		b.Fatal(err)
	}
	o := codec.Object(codectest.Encoded(b, codectest.Struct(b, string(data))))
	wholeMetadata := codec.Selection{"apiVersion": nil, "kind": nil, "metadata": nil, "status": nil}
	for name, sel := range map[string]codec.Selection{"metadata-whole": wholeMetadata, "observed": observedMembers} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := codec.Decode(o, &servingv1.Service{}, sel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
