package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

const (
	errAnswerSizeFmt = "the function answered %d bytes where its first answer was %d"
	errNotWireFmt    = "wireCodec carries only wireRequest and wireAnswer, not %T"
)

// A wireCall sends a request already in the protobuf encoding and takes the
// answer as gRPC delivers it. The time measured is then the function's and
// the transport's: a caller that encodes the request and decodes the answer
// for each call would add its own conversions, the same for every function,
// and bring every ratio closer to 1.
type wireCall struct {
	conn    *grpc.ClientConn
	request []byte
	// size is the first answer's, which every answer measured must match:
	// the same request is answered the same way.
	size int
}

// A wireRequest is a request in the protobuf encoding.
type wireRequest []byte

// A wireAnswer is how many bytes an answer had.
type wireAnswer int

// A wireCodec passes messages in their encoding. It is named for
// protobuf, whose encoding it carries, so that the function decodes the
// request with its own protobuf codec.
type wireCodec struct{}

func (wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*wireRequest)
	if !ok {
		return nil, errors.Errorf(errNotWireFmt, v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*r)}, nil
}

func (wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	a, ok := v.(*wireAnswer)
	if !ok {
		return errors.Errorf(errNotWireFmt, v)
	}
	*a = wireAnswer(data.Len())
	return nil
}

func (wireCodec) Name() string { return "proto" }

// newWireCall encodes req once, and calls the function once to learn the
// size of its answer.
func newWireCall(ctx context.Context, conn *grpc.ClientConn, req *fnv1.RunFunctionRequest) (*wireCall, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	w := &wireCall{conn: conn, request: b}
	n, err := w.send(ctx)
	w.size = n
	return w, err
}

// call calls the function and checks that its answer has the first one's
// size.
func (w *wireCall) call(ctx context.Context) error {
	n, err := w.send(ctx)
	if err != nil {
		return err
	}
	if n != w.size {
		return errors.Errorf(errAnswerSizeFmt, n, w.size)
	}
	return nil
}

func (w *wireCall) send(ctx context.Context) (int, error) {
	req, answer := wireRequest(w.request), wireAnswer(0)
	err := w.conn.Invoke(ctx, fnv1.FunctionRunnerService_RunFunction_FullMethodName, &req, &answer, grpc.ForceCodecV2(wireCodec{}))
	return int(answer), err
}
