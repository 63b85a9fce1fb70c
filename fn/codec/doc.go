// Package codec is the function server's wire format: it reads a
// RunFunctionRequest leaving every Struct in the encoding gRPC received
// (NewCodec), reads what a pass needs where it lies (Object, StringAt,
// Decode), and writes composed resources straight into the encoding gRPC
// sends (Parser), without a protobuf message per JSON value in between.
//
// What an answer carries of the request's buffer and of the Parser's
// pooled buffers is held by the call's Lease until gRPC has encoded the
// answer, as grpc-go documents for mem.Buffer: install NewCodec and
// Leases.Intercept together on one server. The codec's tests hold every
// read to protobuf's own decoder; the function's differential tests hold
// its answers to the SDK's.
package codec
