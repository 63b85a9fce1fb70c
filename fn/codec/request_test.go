package codec

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

// TestReadRequest holds readRequest to protobuf's own decoder, and checks
// that every resource's Struct is left in its encoding.
func TestReadRequest(t *testing.T) {
	for name, b := range codectest.Requests(t, benchRequest(t)) {
		t.Run(name, func(t *testing.T) {
			want := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(b, want); err != nil {
				t.Fatal(err)
			}
			got := &fnv1.RunFunctionRequest{}
			if err := readRequest(b, got); err != nil {
				t.Fatalf("readRequest(): %v", err)
			}
			var resources []*fnv1.Resource
			for _, s := range []*fnv1.State{got.GetObserved(), got.GetDesired()} {
				if s.GetComposite() != nil {
					resources = append(resources, s.GetComposite())
				}
				for _, r := range s.GetResources() {
					resources = append(resources, r)
				}
			}
			for _, rs := range got.GetRequiredResources() {
				resources = append(resources, rs.GetItems()...)
			}
			structs := []*structpb.Struct{got.GetInput(), got.GetContext()}
			for _, r := range resources {
				structs = append(structs, r.GetResource())
			}
			for _, s := range structs {
				if len(s.GetFields()) > 0 {
					t.Errorf("readRequest(): a Struct was decoded: %v", s)
				}
			}
			if diff := cmp.Diff(want, codectest.OnWire(t, got), protocmp.Transform()); diff != "" {
				t.Errorf("readRequest(): -proto.Unmarshal, +got after a trip through the wire format:\n%s", diff)
			}
		})
	}
}

// TestReadRequestRefuses holds readRequest to refuse what protobuf's own
// decoder refuses, inside the Structs it does not decode too.
// observedResource is a request whose one observed resource has the Struct
// s, five messages deep.
func observedResource(s []byte) []byte {
	r := protowire.AppendBytes(protowire.AppendTag(nil, numResource, protowire.BytesType), s)
	entry := protowire.AppendString(protowire.AppendTag(nil, numMapKey, protowire.BytesType), "Job/x")
	entry = protowire.AppendBytes(protowire.AppendTag(entry, numMapValue, protowire.BytesType), r)
	state := protowire.AppendBytes(protowire.AppendTag(nil, numStateResources, protowire.BytesType), entry)
	return protowire.AppendBytes(protowire.AppendTag(nil, numRequestObserved, protowire.BytesType), state)
}

func TestReadRequestRefuses(t *testing.T) {
	resource := observedResource
	member := func(key string, v []byte) []byte { return AppendEntry(nil, key, v) }
	valid := resource(member("kind", StringValue("Job")))
	deep := StringValue("bottom")
	for range 6000 {
		list := protowire.AppendBytes(protowire.AppendTag(nil, numListValues, protowire.BytesType), deep)
		deep = protowire.AppendBytes(protowire.AppendTag(nil, numValueList, protowire.BytesType), list)
	}
	cases := map[string]struct {
		reason string
		in     []byte
	}{
		"Truncated": {
			reason: "A request cut short is refused.",
			in:     valid[:len(valid)-1],
		},
		"StringNotUTF8": {
			reason: "A string of a Struct that is not UTF-8 is refused.",
			in:     resource(member("kind", StringValue("\xff"))),
		},
		"KeyNotUTF8": {
			reason: "A key of a Struct that is not UTF-8 is refused.",
			in:     resource(member("\xff", StringValue("Job"))),
		},
		"StructTruncated": {
			reason: "A Struct whose member is cut short is refused.",
			in:     resource(member("kind", StringValue("Job"))[:4]),
		},
		"TooDeep": {
			reason: "Lists nested beyond protobuf's bound are refused.",
			in:     resource(member("deep", deep)),
		},
	}
	if err := readRequest(valid, &fnv1.RunFunctionRequest{}); err != nil {
		t.Fatalf("readRequest() of the valid request the cases break: %v", err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := proto.Unmarshal(tc.in, &fnv1.RunFunctionRequest{}); err == nil {
				t.Fatalf("%s\nproto.Unmarshal() reads it: the case does not break the request", tc.reason)
			}
			if err := readRequest(tc.in, &fnv1.RunFunctionRequest{}); err == nil {
				t.Errorf("%s\nreadRequest(): no error, want one", tc.reason)
			}
		})
	}
}

// TestReadRequestDepth holds readRequest's bound on nesting to protobuf's,
// through lists and through Structs, on either side of it.
func TestReadRequestDepth(t *testing.T) {
	inList := func(v []byte) []byte {
		list := protowire.AppendBytes(protowire.AppendTag(nil, numListValues, protowire.BytesType), v)
		return protowire.AppendBytes(protowire.AppendTag(nil, numValueList, protowire.BytesType), list)
	}
	inStruct := func(v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, numValueStruct, protowire.BytesType), AppendEntry(nil, "k", v))
	}
	cases := map[string]struct {
		reason string
		nest   func([]byte) []byte
		// messages is how many messages deeper each nest lies.
		messages int
	}{
		"Lists": {
			reason:   "Values nested in lists are read exactly as deep as protobuf reads them.",
			nest:     inList,
			messages: 2,
		},
		"Structs": {
			reason:   "Values nested in Structs, whose map entries protobuf counts too, are read exactly as deep as protobuf reads them.",
			nest:     inStruct,
			messages: 3,
		},
	}
	// Where the nested Struct lies in the request: the Input two messages
	// deep, an observed resource's five.
	placed := map[string]func([]byte) []byte{
		"Input": func(s []byte) []byte {
			return protowire.AppendBytes(protowire.AppendTag(nil, numRequestInput, protowire.BytesType), s)
		},
		"ObservedResource": observedResource,
	}
	for name, tc := range cases {
		for where, place := range placed {
			t.Run(name+"In"+where, func(t *testing.T) {
				v := StringValue("bottom")
				for range maxDepth/tc.messages - 5 {
					v = tc.nest(v)
				}
				var read, refused int
				for range 10 {
					v = tc.nest(v)
					in := place(AppendEntry(nil, "deep", v))
					want := proto.Unmarshal(in, &fnv1.RunFunctionRequest{}) == nil
					got := readRequest(in, &fnv1.RunFunctionRequest{}) == nil
					if got != want {
						t.Fatalf("%s\nreadRequest() read a request of %d bytes: %t, protobuf: %t", tc.reason, len(in), got, want)
					}
					if want {
						read++
					} else {
						refused++
					}
				}
				if read == 0 || refused == 0 {
					t.Errorf("%s\nprotobuf read %d and refused %d requests: the cases do not straddle its bound", tc.reason, read, refused)
				}
			})
		}
	}
}

// A recordingPool is a mem.BufferPool that records what is put back.
type recordingPool struct {
	mem.BufferPool
	put int
}

func (p *recordingPool) Put(b *[]byte) {
	p.put++
	p.BufferPool.Put(b)
}

// TestCodec checks that requestCodec serves the function's server alone,
// reads requests with readRequest and every other message as protobuf's
// codec does, and holds the buffer gRPC lends it until the request's lease
// ends. It failed when the codec replaced protobuf's for the process.
func TestCodec(t *testing.T) {
	if codec := encoding.GetCodecV2(grpcproto.Name); reflect.TypeOf(codec) == reflect.TypeFor[requestCodec]() {
		t.Fatalf("gRPC's codec %q for the process is %T, want protobuf's own", grpcproto.Name, codec)
	}
	ls := &Leases{}
	codec := NewCodec(ls)
	b := bytes.Clone(codectest.Requests(t, benchRequest(t))["Full"])
	pool := &recordingPool{BufferPool: mem.DefaultBufferPool()}
	data := mem.BufferSlice{mem.NewBuffer(&b, pool)}
	req := &fnv1.RunFunctionRequest{}
	if err := codec.Unmarshal(data, req); err != nil {
		t.Fatal(err)
	}
	if s := req.GetObserved().GetComposite().GetResource(); len(s.GetFields()) > 0 {
		t.Errorf("Unmarshal() of a request decoded the composite's Struct: %v", s)
	}
	// As gRPC does once Unmarshal returns.
	data.Free()
	if pool.put != 0 {
		t.Errorf("gRPC's buffer went back to its pool while the request reads it")
	}
	l := claim(&ls.requests, req)
	if l == nil {
		t.Fatal("Unmarshal() left no lease for the request")
	}
	l.end()
	if pool.put != 1 {
		t.Errorf("the request's lease ended and gave back %d buffers, want 1", pool.put)
	}

	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, `{"a":[1,"b"]}`)}}}
	out, err := codec.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	got := &fnv1.RunFunctionResponse{}
	if err := codec.Unmarshal(out, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rsp, got, protocmp.Transform()); diff != "" {
		t.Errorf("a response through the codec: -sent, +read:\n%s", diff)
	}
}

// FuzzReadRequest holds readRequest to protobuf's own decoder on any bytes:
// both refuse them, or both read the same request.
func FuzzReadRequest(f *testing.F) {
	for _, b := range codectest.Requests(f, benchRequest(f)) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := &fnv1.RunFunctionRequest{}
		wantErr := proto.Unmarshal(b, want)
		got := &fnv1.RunFunctionRequest{}
		gotErr := readRequest(bytes.Clone(b), got)
		switch {
		case wantErr != nil && gotErr == nil:
			t.Fatalf("readRequest() reads what proto.Unmarshal refuses (%v)", wantErr)
		case wantErr == nil && gotErr != nil:
			t.Fatalf("readRequest() refuses what proto.Unmarshal reads: %v", gotErr)
		case wantErr != nil:
			return
		}
		if diff := cmp.Diff(want, codectest.OnWire(t, got), protocmp.Transform()); diff != "" {
			t.Errorf("readRequest(): -proto.Unmarshal, +got after a trip through the wire format:\n%s", diff)
		}
	})
}

// BenchmarkReadRequest reads benchRequest's encoding as requestCodec does:
// every field of every Struct checked, the Structs left in their encoding.
func BenchmarkReadRequest(b *testing.B) {
	wire, err := proto.Marshal(benchRequest(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := readRequest(wire, &fnv1.RunFunctionRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRequest is the request of the function's benchmarks: a pass over a
// Lambda whose build has just succeeded, with the build's objects, its
// pod and a Broker observed.
func benchRequest(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	b, err := os.ReadFile("../testdata/bench/request.json")
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{}
	if err := protojson.Unmarshal(b, req); err != nil {
		t.Fatal(err)
	}
	return req
}
