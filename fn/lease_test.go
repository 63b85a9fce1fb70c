package main

import (
	"context"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	fnv1beta1 "github.com/crossplane/function-sdk-go/proto/v1beta1"
)

// serveGRPC serves f on loopback as the function's server, its leases
// from ls, and returns a client of it.
func serveGRPC(t testing.TB, f *Function, ls *leases, opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	return serveOn(t, newServer(f, ls, nil, opts...))
}

// serveOn serves srv on loopback and returns a client of it.
func serveOn(t testing.TB, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// A fastPath serves requests as the function's server does, without the
// transport: read by its codec, answered with a lease, written by its
// codec.
type fastPath struct {
	ls      *leases
	codec   requestCodec
	handler grpc.UnaryHandler
}

func newFastPath(f *Function) *fastPath {
	ls := &leases{}
	return &fastPath{ls: ls, codec: newRequestCodec(ls), handler: func(ctx context.Context, req any) (any, error) {
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
	rsp, err := p.ls.intercept(context.Background(), req, nil, p.handler)
	if err != nil {
		return nil, err
	}
	return p.codec.Marshal(rsp)
}

// convert reads m into into, as the SDK converts between the services'
// versions.
func convert[T proto.Message](m proto.Message, into T) (T, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return into, err
	}
	return into, proto.Unmarshal(b, into)
}

// scribble is an interceptor that, once the handler has answered and
// before gRPC encodes the answer, writes over every buffer it takes from
// the pool, as later calls would.
func scribble(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	rsp, err := handler(ctx, req)
	taken := make([]*byteSink, 64)
	for i := range taken {
		taken[i] = borrow()
		full := (*taken[i])[:cap(*taken[i])]
		for j := range full {
			full[j] = 0xff
		}
	}
	for _, b := range taken {
		buffers.Put(b)
	}
	return rsp, err
}

// TestLeasedAnswersStayWhole serves different passes at once, many times
// over, through the function's server, whose calls have leases, and writes over the
// pool's buffers between each answer and its encoding. An answer encoded
// after its lease gave its buffers back, or a buffer two calls shared,
// would differ from the answer the same request gets without a lease; so
// would one whose earlier steps' resources, which pass through in the
// request's buffer, were given back early.
func TestLeasedAnswersStayWhole(t *testing.T) {
	f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
	otherSpec := helloSpec + "scaling: {minScale: 2, maxScale: 5}\n"
	built := builtRequest(t)
	built.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{
		"earlier": {Resource: mustStruct(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"earlier","namespace":"`+testNS+`"},"data":{"from":"an earlier step"}}`)},
	}}
	reqs := map[string]*fnv1.RunFunctionRequest{
		"built":    built,
		"building": {Input: mustStruct(t, testInput), Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, lambdaXR(t, helloSpec, ""))}}},
		"scaled":   {Input: mustStruct(t, testInput), Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, lambdaXR(t, otherSpec, ""))}}},
		"invalid":  {Input: mustStruct(t, `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","mode":"Sideways"}`), Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, lambdaXR(t, helloSpec, ""))}}},
	}
	want := map[string]*fnv1.RunFunctionResponse{}
	for name, req := range reqs {
		rsp, err := run(t, f, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[name] = rsp
	}

	ls := &leases{}
	conn := serveGRPC(t, f, ls, grpc.ChainUnaryInterceptor(scribble))
	v1, beta := fnv1.NewFunctionRunnerServiceClient(conn), fnv1beta1.NewFunctionRunnerServiceClient(conn)
	// Every other call goes through the v1beta1 service, whose answer is a
	// copy the SDK makes before the lease ends.
	call := func(ctx context.Context, j int, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
		if j%2 == 0 {
			return v1.RunFunction(ctx, req)
		}
		breq, err := convert(req, &fnv1beta1.RunFunctionRequest{})
		if err != nil {
			return nil, err
		}
		rsp, err := beta.RunFunction(ctx, breq)
		if err != nil {
			return nil, err
		}
		return convert(rsp, &fnv1.RunFunctionResponse{})
	}
	const callers, calls = 4, 40
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for j := range calls {
				for name, req := range reqs {
					got, err := call(context.Background(), j, req)
					if err != nil {
						t.Errorf("caller %d, call %d, %s: %v", i, j, name, err)
						return
					}
					if diff := cmp.Diff(want[name], got, protocmp.Transform()); diff != "" {
						t.Errorf("caller %d, call %d, %s: -unleased, +leased:\n%s", i, j, name, diff)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if n := entries(&ls.requests) + entries(&ls.answers); n != 0 {
		t.Errorf("%d requests or answers are left without their lease ended", n)
	}
}

// entries counts a sync.Map's entries.
func entries(m *sync.Map) int {
	n := 0
	m.Range(func(_, _ any) bool {
		n++
		return true
	})
	return n
}

// TestUnencodedAnswerEndsItsLease drops an answer that gRPC never encodes,
// as when a call ends before its answer is sent: its lease ends once the
// answer is garbage, and the server forgets it.
func TestUnencodedAnswerEndsItsLease(t *testing.T) {
	ls := &leases{}
	l := &lease{}
	buf := borrow()
	*buf = append(*buf, "held"...)
	_ = l.keep(buf)
	await(&ls.answers, &fnv1.RunFunctionResponse{}, l)
	for range 100 {
		runtime.GC()
		l.mu.Lock()
		ended := l.ended
		l.mu.Unlock()
		if ended && entries(&ls.answers) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the lease of an answer that is garbage did not end")
}
