package main

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

// serveGRPC serves f on loopback as the function's server, its leases
// from ls, and returns a client of it.
func serveGRPC(t testing.TB, f *Function, ls *codec.Leases, opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	return codectest.Serve(t, newServer(f, ls, nil, opts...))
}

// A fastPath serves requests as the function's server does, without the
// transport: read by its codec, answered with a lease, written by its
// codec.
type fastPath struct {
	ls      *codec.Leases
	codec   encoding.CodecV2
	handler grpc.UnaryHandler
}

func newFastPath(f *Function) *fastPath {
	ls := &codec.Leases{}
	return &fastPath{ls: ls, codec: codec.NewCodec(ls), handler: func(ctx context.Context, req any) (any, error) {
		return f.RunFunction(ctx, req.(*fnv1.RunFunctionRequest)) //nolint:forcetypeassert // The codec reads one.
	}}
}

// serve answers the request encoded in wire, which gRPC lends it, and
// returns the answer's encoding, which the caller frees.
func (p *fastPath) serve(wire []byte) (mem.BufferSlice, error) {
	req := &fnv1.RunFunctionRequest{}
	if err := p.codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, req); err != nil {
		return nil, err
	}
	rsp, err := p.ls.Intercept(context.Background(), req, nil, p.handler)
	if err != nil {
		return nil, err
	}
	return p.codec.Marshal(rsp)
}
