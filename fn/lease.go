package main

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// An answer refers to the bytes it was made from until gRPC has encoded
// it: the request's resources and desired state pass through as they came
// (requestCodec), and the composed resources are written where the parser
// wrote them (structParser). Copying each out at its length was a third of
// a request's allocations. A lease instead holds those pooled buffers for
// one call and gives them back once gRPC has encoded the answer, which it
// does with this process's codec right after the handler returns.
type lease struct {
	mu   sync.Mutex
	held []*byteSink
}

// leaseKey finds a call's lease in its context.
type leaseKey struct{}

var (
	// leasing is set once a lease has been handed to a handler: from
	// then on gRPC calls reach leaseAnswers, so a request that the codec
	// reads into a pooled buffer is handed on, never left behind. Until
	// then, and in any process whose server does not take leaseAnswers,
	// requests are read into buffers of their own.
	leasing atomic.Bool
	// unleased are the pooled buffers of requests read but not yet
	// handed to their call's lease, by request.
	unleased sync.Map
	// answers are the leases of answers not yet encoded, by answer.
	answers sync.Map
)

// leaseOf is the lease of the call ctx belongs to; nil when it has none,
// such as a call that did not come through gRPC.
func leaseOf(ctx context.Context) *lease {
	l, _ := ctx.Value(leaseKey{}).(*lease)
	return l
}

// keep is what an answer may carry of buf: with a lease, buf's bytes, held
// until the answer is encoded; without one, a copy at its length, and buf
// goes back to the pool.
func (l *lease) keep(buf *byteSink) []byte {
	b := *buf
	if l == nil {
		b = append([]byte(nil), b...)
		buffers.Put(buf)
		return b
	}
	l.hold(buf)
	// Capped, so that no append writes into the pooled buffer.
	return b[:len(b):len(b)]
}

// hold keeps buf until the lease ends.
func (l *lease) hold(buf *byteSink) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = append(l.held, buf)
}

// end gives back every buffer the lease holds.
func (l *lease) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.held {
		buffers.Put(b)
	}
	l.held = nil
}

// leaseAnswers is a gRPC interceptor that gives each RunFunction call a
// lease: its request's buffer and those its answer is written in. gRPC
// encodes a call's answer exactly when the handler returns one without an
// error, so the lease of such an answer ends in requestCodec.Marshal; any
// other ends here.
func leaseAnswers(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	leasing.Store(true)
	l := &lease{}
	if r, ok := req.(*fnv1.RunFunctionRequest); ok {
		if buf, ok := unleased.LoadAndDelete(r); ok {
			l.hold(buf.(*byteSink)) //nolint:forcetypeassert // The map holds nothing else.
		}
	}
	rsp, err := handler(context.WithValue(ctx, leaseKey{}, l), req)
	if a, ok := rsp.(*fnv1.RunFunctionResponse); ok && a != nil && err == nil {
		answers.Store(a, l)
		return rsp, nil
	}
	l.end()
	return rsp, err
}

// withLeases serves RunFunction calls with leaseAnswers. The SDK runs its
// interceptors only when it serves metrics; without them requests are
// read into buffers of their own and answers copied out of the pool.
func withLeases() function.ServeOption {
	return func(o *function.ServeOptions) error {
		o.UnaryInterceptors = append(o.UnaryInterceptors, leaseAnswers)
		return nil
	}
}
