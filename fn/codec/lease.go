package codec

import (
	"context"
	"runtime"
	"sync"
	"weak"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// A Lease holds the buffers one call's answer is made of, so that none is
// copied out at its length: the request's, which gRPC lends the codec as
// mem.Buffer references (requestCodec.Unmarshal), since resources of
// earlier steps pass through as they came; and the pooled buffers the
// Parser writes the composed resources in. A Lease ends once gRPC has
// encoded its answer, when the encoding is a copy, or, should gRPC never
// encode it, when the answer is garbage: never while anything can still
// read it to send it.
type Lease struct {
	mu      sync.Mutex
	request mem.Buffer
	held    []*byteSink
	ended   bool
}

// leaseKey finds a call's lease in its context.
type leaseKey struct{}

// LeaseOf is the lease of the call ctx belongs to; nil when it has none,
// such as a call that did not come through the function's server.
func LeaseOf(ctx context.Context) *Lease {
	l, _ := ctx.Value(leaseKey{}).(*Lease)
	return l
}

// keep is what an answer may carry of buf: with a lease, buf's bytes, held
// until the lease ends; without one, a copy at its length, and buf goes
// back to the pool.
func (l *Lease) keep(buf *byteSink) []byte {
	b := *buf
	if l == nil {
		b = append([]byte(nil), b...)
		buffers.Put(buf)
		return b
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = append(l.held, buf)
	// Capped, so that no append writes into the pooled buffer.
	return b[:len(b):len(b)]
}

// end gives back every buffer the lease holds; it is called once, by the
// first of the ways a lease ends.
func (l *Lease) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.ended = true
	for _, b := range l.held {
		buffers.Put(b)
	}
	l.held = nil
	if l.request != nil {
		l.request.Free()
	}
}

// Leases are the function server's Leases not yet ended, by the message
// they wait for: a request until its call takes it, an answer until gRPC
// encodes it. The keys are weak, so a message that is never taken or
// encoded ends its lease when it is garbage.
type Leases struct {
	requests, answers sync.Map
}

// await keeps l waiting for m until claim takes it, or until m is garbage.
func await[M any](waiting *sync.Map, m *M, l *Lease) {
	k := weak.Make(m)
	waiting.Store(k, l)
	runtime.AddCleanup(m, func(k weak.Pointer[M]) {
		if l, ok := waiting.LoadAndDelete(k); ok {
			l.(*Lease).end() //nolint:forcetypeassert // The map holds nothing else.
		}
	}, k)
}

// claim is the lease that waits for m; nil when none does.
func claim[M any](waiting *sync.Map, m *M) *Lease {
	l, ok := waiting.LoadAndDelete(weak.Make(m))
	if !ok {
		return nil
	}
	return l.(*Lease) //nolint:forcetypeassert // The map holds nothing else.
}

// Intercept gives each RunFunction call the lease its request was read
// into, and hands it on to the call's answer. gRPC encodes an answer only
// when its handler returns it without an error; any other ends its lease
// here.
func (ls *Leases) Intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	r, ok := req.(*fnv1.RunFunctionRequest)
	if !ok {
		return handler(ctx, req)
	}
	l := claim(&ls.requests, r)
	if l == nil {
		l = &Lease{}
	}
	rsp, err := handler(context.WithValue(ctx, leaseKey{}, l), req)
	if a, ok := rsp.(*fnv1.RunFunctionResponse); ok && a != nil && err == nil {
		await(&ls.answers, a, l)
		return rsp, nil
	}
	l.end()
	return rsp, err
}
