package codec

import (
	"context"
	"maps"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	fnv1beta1 "github.com/crossplane/function-sdk-go/proto/v1beta1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

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

// An echo answers as the function's passes do, with what their answers
// are made of: the request's desired resources, passed through in the
// request's buffer, and a composed resource for each observed one, which
// the parser writes into the call's lease when it has one.
type echo struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (echo) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: maps.Clone(req.GetDesired().GetResources())}}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	p := Parser{Lease: LeaseOf(ctx)}
	for name, r := range req.GetObserved().GetResources() {
		o, err := ObjectOf(r.GetResource())
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := Decode(o, &doc, nil); err != nil {
			return nil, err
		}
		if rsp.Desired.Resources["echo/"+name], err = p.Resource(doc, func([]byte) bool { return true }); err != nil {
			return nil, err
		}
	}
	return rsp, nil
}

// TestLeasedAnswersStayWhole serves different requests at once, many
// times over, through a server with the codec, whose calls have leases,
// and writes over the pool's buffers between each answer and its encoding.
// An answer encoded after its lease gave its buffers back, or a buffer two
// calls shared, would differ from the answer the same request gets without
// a lease; so would one whose earlier steps' resources, which pass through
// in the request's buffer, were given back early.
func TestLeasedAnswersStayWhole(t *testing.T) {
	earlier := benchRequest(t)
	earlier.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{
		"earlier": {Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"earlier"},"data":{"from":"an earlier step"}}`)},
	}}
	reqs := map[string]*fnv1.RunFunctionRequest{
		"bench":   benchRequest(t),
		"earlier": earlier,
		"small":   {Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"ConfigMap/a": {Resource: codectest.Struct(t, `{"kind":"ConfigMap","data":{"a":"b"}}`)}}}},
		"empty":   {},
	}
	want := map[string]*fnv1.RunFunctionResponse{}
	for name, req := range reqs {
		rsp, err := echo{}.RunFunction(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[name] = codectest.OnWire(t, rsp)
	}

	ls := &Leases{}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(NewCodec(ls)), grpc.ChainUnaryInterceptor(scribble, ls.Intercept))
	fnv1.RegisterFunctionRunnerServiceServer(srv, echo{})
	fnv1beta1.RegisterFunctionRunnerServiceServer(srv, function.ServeBeta(echo{}))
	conn := codectest.Serve(t, srv)
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

// convert reads m into into, as the SDK converts between the services'
// versions.
func convert[T proto.Message](m proto.Message, into T) (T, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return into, err
	}
	return into, proto.Unmarshal(b, into)
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
	ls := &Leases{}
	l := &Lease{}
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
