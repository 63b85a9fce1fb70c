package codec

import (
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Field numbers of google.protobuf's Struct, its map entries, Value and
// ListValue, and the SDK's Resource.
const (
	numStructFields protowire.Number = 1
	numEntryKey     protowire.Number = 1
	numEntryValue   protowire.Number = 2
	numValueNull    protowire.Number = 1
	numValueNumber  protowire.Number = 2
	numValueString  protowire.Number = 3
	numValueBool    protowire.Number = 4
	numValueStruct  protowire.Number = 5
	numValueList    protowire.Number = 6
	numListValues   protowire.Number = 1
	numResource     protowire.Number = 1
)

// maxDepth is how many messages deep protobuf's own decoder reads.
const maxDepth = 10000

const (
	errWire    = "invalid protobuf encoding"
	errUTF8    = "a string of a Struct is not valid UTF-8"
	errTooDeep = "a Struct nests too deeply"
)

// An Object is a JSON Object in the protobuf encoding of a Struct: the
// fields of its map entries, as gRPC carries it. Requests arrive so
// (NewCodec) and answers leave so (Parser): a pass reads what it
// needs where it lies, and decodes into typed objects only what it reads,
// without a message per JSON value in between.
type Object []byte

// A Value is the protobuf encoding of one of a Struct's Values.
type Value []byte

// ObjectOf is the encoding of s: the bytes it was read from, when
// requestCodec left it encoded, else s written again, as for a request a
// test or the SDK's v1beta1 server made of messages.
func ObjectOf(s *structpb.Struct) (Object, error) {
	switch {
	case s == nil:
		return nil, nil
	case len(s.GetFields()) == 0:
		return Object(s.ProtoReflect().GetUnknown()), nil
	}
	b, err := proto.Marshal(s)
	return Object(b), err
}

// ResourceOf is a composed resource whose Struct is o.
func ResourceOf(o Object, ready fnv1.Ready) *fnv1.Resource {
	r := &fnv1.Resource{Ready: ready}
	r.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(make([]byte, 0, len(o)+4), numResource, protowire.BytesType), o))
	return r
}

// A field is one field of a message's encoding.
type field struct {
	num protowire.Number
	typ protowire.Type
	// content is a length-delimited field's bytes; nil for another type.
	content []byte
	// n is what a varint or fixed field holds.
	n uint64
	// raw is the whole field as encoded.
	raw []byte
}

// errStop ends a walk of fields early; it is no failure.
var errStop = errors.New("stop")

// fields calls fn with each field of a message encoding b, in order, until
// fn returns an error, which it returns. An encoding that is not well
// formed is refused at its first bad field.
func fields(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		f, err := next(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = b[len(f.raw):]
	}
	return nil
}

// next is the first field of a message encoding b, which must not be
// empty.
func next(b []byte) (field, error) {
	num, typ, tag := protowire.ConsumeTag(b)
	if tag < 0 {
		return field{}, errors.New(errWire)
	}
	size := protowire.ConsumeFieldValue(num, typ, b[tag:])
	if size < 0 {
		return field{}, errors.New(errWire)
	}
	f := field{num: num, typ: typ, raw: b[:tag+size]}
	switch typ {
	case protowire.BytesType:
		f.content, _ = protowire.ConsumeBytes(b[tag:])
	case protowire.VarintType:
		f.n, _ = protowire.ConsumeVarint(b[tag:])
	case protowire.Fixed64Type:
		f.n, _ = protowire.ConsumeFixed64(b[tag:])
	default:
	}
	return f, nil
}

// The accessors below read encodings validObject checked or this package
// wrote: the error of their walks is errStop, or nil.

// Entries calls fn with each member of o, in order, until fn returns false:
// its key, its value and the map entry that holds them. A key may come
// twice; protobuf reads the last.
func (o Object) Entries(fn func(key []byte, v Value, entry []byte) bool) {
	_ = fields(o, func(f field) error {
		if f.num != numStructFields || f.typ != protowire.BytesType {
			return nil
		}
		var key, v []byte
		_ = fields(f.content, func(e field) error {
			switch {
			case e.typ != protowire.BytesType:
			case e.num == numEntryKey:
				key = e.content
			case e.num == numEntryValue:
				v = e.content
			}
			return nil
		})
		if !fn(key, Value(v), f.raw) {
			return errStop
		}
		return nil
	})
}

// Get is the value of o's member key, as protobuf reads it: the last.
func (o Object) Get(key string) (Value, bool) {
	var found Value
	ok := false
	o.Entries(func(k []byte, v Value, _ []byte) bool {
		if string(k) == key {
			found, ok = v, true
		}
		return true
	})
	return found, ok
}

// valueTypes are the wire types of a Value's oneof fields: a field of
// another type is an unknown field to protobuf.
var valueTypes = map[protowire.Number]protowire.Type{
	numValueNull: protowire.VarintType, numValueNumber: protowire.Fixed64Type, numValueString: protowire.BytesType,
	numValueBool: protowire.VarintType, numValueStruct: protowire.BytesType, numValueList: protowire.BytesType,
}

// kind is the Value's kind, the last of its oneof fields as protobuf reads
// it (0 for a Value without one, which is null), with its content: the
// bytes of a string, Struct or ListValue, else its number.
func (v Value) kind() (protowire.Number, []byte, uint64) {
	var kind protowire.Number
	var content []byte
	var n uint64
	_ = fields(v, func(f field) error {
		if want, ok := valueTypes[f.num]; ok && f.typ == want {
			kind, content, n = f.num, f.content, f.n
		}
		return nil
	})
	return kind, content, n
}

// Object is the Object v holds; nil when it holds none.
func (v Value) Object() Object {
	if kind, c, _ := v.kind(); kind == numValueStruct {
		return Object(c)
	}
	return nil
}

// List calls fn with each value of the List v holds, until fn returns
// false.
func (v Value) List(fn func(Value) bool) {
	kind, c, _ := v.kind()
	if kind != numValueList {
		return
	}
	_ = fields(c, func(f field) error {
		if f.num != numListValues || f.typ != protowire.BytesType {
			return nil
		}
		if !fn(Value(f.content)) {
			return errStop
		}
		return nil
	})
}

// StructAt is the object at a path of members in o; nil when there is none.
func StructAt(o Object, path ...string) Object {
	for _, key := range path {
		v, _ := o.Get(key)
		if o = v.Object(); o == nil {
			return nil
		}
	}
	return o
}

// StringAt is the string at a path of members in o; empty when there is
// none.
func StringAt(o Object, path ...string) string {
	return string(TextAt(o, path...))
}

// TextAt is the bytes of the string at a path of members in o, shared with
// o; nil when there is none. Compared as string(TextAt(...)), they are not
// copied.
func TextAt(o Object, path ...string) []byte {
	last := len(path) - 1
	v, _ := StructAt(o, path[:last]...).Get(path[last])
	if kind, c, _ := v.kind(); kind == numValueString {
		return c
	}
	return nil
}

// Filter is o with only the members keep admits, in bytes of its own.
func (o Object) Filter(keep func(key []byte) bool) Object {
	var b []byte
	o.Entries(func(k []byte, _ Value, entry []byte) bool {
		if keep(k) {
			b = append(b, entry...)
		}
		return true
	})
	return Object(b)
}

// Named is whether keys holds k.
func Named(k []byte, keys []string) bool {
	for _, key := range keys {
		if string(k) == key {
			return true
		}
	}
	return false
}

// AppendEntry appends a member of key whose Value is encoded as v.
func AppendEntry(b []byte, key string, v []byte) []byte {
	b = protowire.AppendTag(b, numStructFields, protowire.BytesType)
	size := protowire.SizeTag(numEntryKey) + protowire.SizeBytes(len(key)) + protowire.SizeTag(numEntryValue) + protowire.SizeBytes(len(v))
	b = protowire.AppendVarint(b, uint64(size)) //nolint:gosec // A size is not negative.
	b = protowire.AppendTag(b, numEntryKey, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, numEntryValue, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// ObjectValue is the Value encoding of o.
func ObjectValue(o Object) []byte {
	return protowire.AppendBytes(protowire.AppendTag(make([]byte, 0, len(o)+4), numValueStruct, protowire.BytesType), o)
}

// StringValue is the Value encoding of s.
func StringValue(s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, numValueString, protowire.BytesType), s)
}

// NumberValue is the Value encoding of f.
func NumberValue(f float64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, numValueNumber, protowire.Fixed64Type), math.Float64bits(f))
}

// validObject checks that b is a Struct protobuf's decoder would read,
// where the Struct lies depth messages deep: every field well formed, every
// string UTF-8, nesting bounded. Fields a Struct, Value or ListValue does
// not have are left, as protobuf leaves unknown fields.
//
// It keeps the messages it is inside on a stack of its own rather than
// recursing through them: a request nested as deeply as protobuf reads
// costs a slice, not megabytes of goroutine stack copied as it grows.
func validObject(b []byte, depth int32) error {
	var room [32]nested
	stack, err := enter(room[:0], nested{rest: b, kind: inStruct, depth: depth})
	for err == nil && len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.rest) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		num, typ, content, n, ferr := scan(top.rest)
		if ferr != nil {
			return ferr
		}
		top.rest = top.rest[n:]
		if typ != protowire.BytesType {
			continue
		}
		in := nested{rest: content, depth: top.depth + 1}
		switch {
		case top.kind == inEntry && num == numEntryKey, top.kind == inValue && num == numValueString:
			err = validUTF8(content)
		case top.kind == inStruct && num == numStructFields:
			in.kind = inEntry
			stack, err = enter(stack, in)
		case top.kind == inEntry && num == numEntryValue, top.kind == inList && num == numListValues:
			in.kind = inValue
			stack, err = enter(stack, in)
		case top.kind == inValue && num == numValueStruct:
			in.kind = inStruct
			stack, err = enter(stack, in)
		case top.kind == inValue && num == numValueList:
			in.kind = inList
			stack, err = enter(stack, in)
		}
	}
	return err
}

// A nested message is one validObject is inside: the fields it has yet to
// read, what it is, and how many messages deep it lies, as protobuf counts
// them: every message, a map's entries too.
type nested struct {
	rest  []byte
	depth int32
	kind  nestedKind
}

// A nestedKind is what a nested message is.
type nestedKind uint8

const (
	inStruct nestedKind = iota
	inEntry
	inValue
	inList
)

// scan reads the first field of a message encoding b, which must not be
// empty, as next does: its number and type, its content when it is
// length-delimited, and its length in b. validObject reads every field of
// every Struct of a request, and most of them are a one-byte tag and a
// one-byte length, which scan reads without protowire. next does not: it
// makes a field of its own for each, as the accessors take it, which is
// too slow for this loop.
func scan(b []byte) (num protowire.Number, typ protowire.Type, content []byte, n int, err error) {
	const short = 0x80 // a varint of one byte is below it
	if len(b) >= 2 && b[0] < short && b[0]>>3 != 0 && protowire.Type(b[0]&7) == protowire.BytesType && b[1] < short {
		n = 2 + int(b[1])
		if n > len(b) {
			return 0, 0, nil, 0, errors.New(errWire)
		}
		return protowire.Number(b[0] >> 3), protowire.BytesType, b[2:n], n, nil
	}
	f, err := next(b)
	return f.num, f.typ, f.content, len(f.raw), err
}

// enter pushes m onto stack, unless it lies deeper than protobuf reads.
func enter(stack []nested, m nested) ([]nested, error) {
	if m.depth > maxDepth {
		return stack, errors.New(errTooDeep)
	}
	return append(stack, m), nil
}

func validUTF8(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New(errUTF8)
	}
	return nil
}
