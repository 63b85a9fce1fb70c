// Package codectest holds what the tests of the codec and of the function
// that serves with it share: messages as they come over the wire.
package codectest

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// OnWire is m written and read back in the wire format: a message whose
// Structs are carried in their encoding reads as a decoded one would.
func OnWire[M proto.Message](t testing.TB, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	read := m.ProtoReflect().New().Interface().(M) //nolint:forcetypeassert // A new message of M's own type.
	if err := proto.Unmarshal(b, read); err != nil {
		t.Fatal(err)
	}
	return read
}

// Struct is the Struct of the JSON object j.
func Struct(t testing.TB, j string) *structpb.Struct {
	t.Helper()
	s := &structpb.Struct{}
	if err := s.UnmarshalJSON([]byte(j)); err != nil {
		t.Fatalf("%v: %s", err, j)
	}
	return s
}

// Serve serves srv on loopback until the test ends, and returns a client
// of it.
func Serve(t testing.TB, srv *grpc.Server) *grpc.ClientConn {
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

// Encoded is m's wire encoding.
func Encoded(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// StructIn is the Struct b encodes.
func StructIn(t testing.TB, b []byte) *structpb.Struct {
	t.Helper()
	s := &structpb.Struct{}
	if err := proto.Unmarshal(b, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Requests are encodings the codec must read as protobuf does: base, base
// with every other field of a request set, no request at all, and base
// with fields that come twice.
func Requests(t testing.TB, base *fnv1.RunFunctionRequest) map[string][]byte {
	t.Helper()
	full := proto.CloneOf(base)
	full.Desired = &fnv1.State{
		Composite: &fnv1.Resource{Resource: Struct(t, `{"status":{"earlier":"step"}}`), ConnectionDetails: map[string][]byte{"k": []byte("v")}},
		Resources: map[string]*fnv1.Resource{"earlier": {Resource: Struct(t, `{"kind":"ConfigMap","data":{"a":"b"}}`), Ready: fnv1.Ready_READY_TRUE}},
	}
	full.Meta = &fnv1.RequestMeta{Tag: "tag"}
	full.Context = Struct(t, `{"apiextensions.crossplane.io/environment":{"a":1}}`)
	full.Credentials = map[string]*fnv1.Credentials{"c": {Source: &fnv1.Credentials_CredentialData{CredentialData: &fnv1.CredentialData{Data: map[string][]byte{"k": []byte("v")}}}}}
	// A field that comes twice: protobuf merges a message, and the last of
	// two map entries of one key wins.
	again := &fnv1.RunFunctionRequest{Observed: &fnv1.State{
		Composite: &fnv1.Resource{Resource: Struct(t, `{"added":true}`)},
		Resources: map[string]*fnv1.Resource{"Broker/events": {Resource: Struct(t, `{"kind":"Broker","replaced":true}`)}},
	}}
	return map[string][]byte{
		"Built":   Encoded(t, base),
		"Full":    Encoded(t, full),
		"Empty":   nil,
		"Repeats": append(Encoded(t, base), Encoded(t, again)...),
	}
}
