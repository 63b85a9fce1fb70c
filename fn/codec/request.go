package codec

import (
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Field numbers of the request's messages that readRequest reads itself.
const (
	numRequestObserved protowire.Number = 2
	numRequestDesired  protowire.Number = 3
	numRequestInput    protowire.Number = 4
	numRequestContext  protowire.Number = 5
	numRequestRequired protowire.Number = 8
	numStateComposite  protowire.Number = 1
	numStateResources  protowire.Number = 2
	numResourcesItems  protowire.Number = 1
	numMapKey          protowire.Number = 1
	numMapValue        protowire.Number = 2
)

const (
	errRequest     = "cannot read the RunFunctionRequest"
	errFmtResource = "cannot read the resource %q"
	errMapKey      = "a map key is not valid UTF-8"
)

// A requestCodec is gRPC's protobuf codec, except that it reads a
// RunFunctionRequest with readRequest, into a lease. Decoding every JSON
// value of every resource into a message of its own was most of the
// allocations of a request, and a pass reads few of them.
type requestCodec struct {
	encoding.CodecV2
	leases *Leases
}

// NewCodec is the codec of one server (grpc.ForceServerCodecV2, never for
// the process) whose calls take their leases from ls (Leases.Intercept):
// gRPC's protobuf codec, but for requests, which it reads into a lease.
func NewCodec(ls *Leases) encoding.CodecV2 {
	return requestCodec{CodecV2: encoding.GetCodecV2(grpcproto.Name), leases: ls}
}

// Unmarshal reads data into v. gRPC frees data once this returns; a
// request keeps a reference of its own, which its lease frees.
func (c requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*fnv1.RunFunctionRequest)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	if err := readRequest(buf.ReadOnlyData(), req); err != nil {
		buf.Free()
		return err
	}
	await(&c.leases.requests, req, &Lease{request: buf})
	return nil
}

// Marshal writes v. The encoding is a copy, so an answer's lease ends
// here.
func (c requestCodec) Marshal(v any) (mem.BufferSlice, error) {
	out, err := c.CodecV2.Marshal(v)
	if rsp, ok := v.(*fnv1.RunFunctionResponse); ok {
		if l := claim(&c.leases.answers, rsp); l != nil {
			l.end()
		}
	}
	return out, err
}

// inRequest is how many messages deep a message field of the request lies,
// as protobuf counts to its bound: the request is the first.
const inRequest int32 = 2

// readRequest reads b into req as protobuf's decoder does, except that its
// Structs (of each resource of the observed and desired state and of the
// required resources, the Input and the context) stay in their encoding
// (object), checked but not decoded: each is carried as the Struct's
// unknown fields, which protobuf writes again as they are. Those encodings
// share b, which must not change afterwards.
func readRequest(b []byte, req *fnv1.RunFunctionRequest) error {
	return errors.Wrap(readMessage(b, req, func(num protowire.Number, content []byte) (bool, error) {
		switch num {
		case numRequestObserved, numRequestDesired:
			s := &req.Observed
			if num == numRequestDesired {
				s = &req.Desired
			}
			if *s == nil {
				*s = &fnv1.State{}
			}
			return true, readState(content, *s, inRequest)
		case numRequestInput:
			return true, keepStruct(content, &req.Input, inRequest)
		case numRequestContext:
			return true, keepStruct(content, &req.Context, inRequest)
		case numRequestRequired:
			_, err := readMapField(content, &req.RequiredResources, inRequest, readResources)
			return true, err
		default:
			return false, nil
		}
	}), errRequest)
}

// readResources reads the Resources of a requirement, which lie depth
// messages deep in the request: 3, below the request and the map's entry.
func readResources(b []byte, rs *fnv1.Resources, depth int32) error {
	return readMessage(b, rs, func(num protowire.Number, content []byte) (bool, error) {
		if num != numResourcesItems {
			return false, nil
		}
		r := &fnv1.Resource{}
		rs.Items = append(rs.Items, r)
		return true, readResource(content, r, depth+1)
	})
}

// readState reads a State, depth messages deep: its composite resource and
// composed resources.
func readState(b []byte, s *fnv1.State, depth int32) error {
	return readMessage(b, s, func(num protowire.Number, content []byte) (bool, error) {
		switch num {
		case numStateComposite:
			if s.Composite == nil {
				s.Composite = &fnv1.Resource{}
			}
			return true, readResource(content, s.Composite, depth+1)
		case numStateResources:
			name, err := readMapField(content, &s.Resources, depth+1, readResource)
			return true, errors.Wrapf(err, errFmtResource, name)
		default:
			return false, nil
		}
	})
}

// readResource reads a Resource, depth messages deep, leaving its Struct
// in its encoding.
func readResource(b []byte, r *fnv1.Resource, depth int32) error {
	return readMessage(b, r, func(num protowire.Number, content []byte) (bool, error) {
		if num != numResource {
			return false, nil
		}
		return true, keepStruct(content, &r.Resource, depth+1)
	})
}

// keepStruct checks a Struct's encoding and keeps it in *s, as the unknown
// fields of a Struct that protobuf writes again as they are. The encoding
// is b's own bytes, capped so that no append writes into b. A message field
// that comes again merges: for a Struct, its entries follow the first's.
// The Struct lies depth messages deep in the request.
func keepStruct(b []byte, s **structpb.Struct, depth int32) error {
	if err := validObject(b, depth); err != nil {
		return err
	}
	if *s == nil {
		*s = &structpb.Struct{}
	}
	m := (*s).ProtoReflect()
	if was := m.GetUnknown(); len(was) > 0 {
		b = append(was[:len(was):len(was)], b...)
	}
	m.SetUnknown(b[:len(b):len(b)])
	return nil
}

// readMapField reads an entry of a protobuf map of strings to messages into
// *m, its message read by read, and returns its key. A key that comes again
// replaces, as in protobuf. The entry lies depth messages deep, and its
// message one deeper.
func readMapField[M any](b []byte, m *map[string]*M, depth int32, read func([]byte, *M, int32) error) (string, error) {
	key, v, err := readMapEntry(b)
	if err != nil {
		return key, err
	}
	if *m == nil {
		*m = map[string]*M{}
	}
	value := new(M)
	(*m)[key] = value
	return key, read(v, value, depth+1)
}

// readMapEntry reads an entry of a protobuf map of strings to messages. A
// field that comes again replaces, as in protobuf; every key is checked, as
// protobuf checks each it reads.
func readMapEntry(b []byte) (string, []byte, error) {
	var key, v []byte
	err := readMessage(b, nil, func(num protowire.Number, content []byte) (bool, error) {
		switch num {
		case numMapKey:
			if err := validUTF8(content); err != nil {
				return true, errors.New(errMapKey)
			}
			key = content
		case numMapValue:
			v = content
		default:
		}
		return true, nil
	})
	return string(key), v, err
}

// readMessage reads the fields of b into m: read reads each
// length-delimited field it knows and returns true; protobuf's own decoder
// merges every other field into m. A nil m drops them.
func readMessage(b []byte, m proto.Message, read func(num protowire.Number, content []byte) (bool, error)) error {
	return fields(b, func(f field) error {
		if f.typ == protowire.BytesType {
			if done, err := read(f.num, f.content); err != nil || done {
				return err
			}
		}
		if m == nil {
			return nil
		}
		return (proto.UnmarshalOptions{Merge: true}).Unmarshal(f.raw, m)
	})
}
