package main

import (
	"math"
	"strconv"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
	kjson "sigs.k8s.io/json"

	"github.com/crossplane/function-sdk-go/errors"
)

// The function's requests and answers carry objects as protobuf Structs, a
// message per JSON value. The SDK converts them through maps both ways, and
// typed objects through maps again, which was most of a pass's time and
// allocations. These conversions go through JSON instead: typed objects are
// written by encoding/json and parsed into the protobuf encoding of Structs
// (parse.go), and Structs are written as JSON and read into typed objects by
// the API machinery's own case-sensitive decoder.

const (
	errFmtEncode    = "cannot encode %T"
	errFmtDecode    = "cannot decode into %T"
	errFmtJSON      = "invalid JSON at byte %d"
	errFmtNotObject = "want a JSON object, got %q at byte %d"
	errFmtNotFinite = "cannot write the number %v as JSON"
	errFmtStrict    = "unknown or duplicate fields in %T: %v"
)

// decodeStruct reads s into v as the API server would read its JSON:
// field names match case-sensitively and unknown fields are left out.
func decodeStruct(s *structpb.Struct, v any) error {
	return withJSON(s, func(b []byte) error {
		return errors.Wrapf(kjson.UnmarshalCaseSensitivePreserveInts(b, v), errFmtDecode, v)
	})
}

// decodeStrict reads s into v, refusing unknown and duplicate fields.
func decodeStrict(s *structpb.Struct, v any) error {
	return withJSON(s, func(b []byte) error {
		strict, err := kjson.UnmarshalStrict(b, v)
		if err != nil {
			return errors.Wrapf(err, errFmtDecode, v)
		}
		if len(strict) > 0 {
			return errors.Errorf(errFmtStrict, v, strict)
		}
		return nil
	})
}

// A byteSink is a buffer encoding/json writes into.
type byteSink []byte

func (s *byteSink) Write(b []byte) (int, error) {
	*s = append(*s, b...)
	return len(b), nil
}

// jsonBuffers are reused for JSON that is parsed or decoded at once: the
// parser and the decoders copy what they keep.
var jsonBuffers = sync.Pool{New: func() any { return new(byteSink) }}

// withJSON calls fn with s written as JSON.
func withJSON(s *structpb.Struct, fn func([]byte) error) error {
	buf := jsonBuffers.Get().(*byteSink) //nolint:forcetypeassert // The pool holds nothing else.
	defer jsonBuffers.Put(buf)
	b, err := appendStruct((*buf)[:0], s)
	if err != nil {
		return err
	}
	*buf = b
	return fn(b)
}

// appendStruct writes s as a JSON object.
func appendStruct(b []byte, s *structpb.Struct) ([]byte, error) {
	b = append(b, '{')
	first := true
	for k, v := range s.GetFields() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendValue writes v as JSON; a Value without a kind is null.
func appendValue(b []byte, v *structpb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StructValue:
		return appendStruct(b, k.StructValue)
	case *structpb.Value_ListValue:
		b = append(b, '[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case *structpb.Value_StringValue:
		return appendString(b, k.StringValue), nil
	case *structpb.Value_NumberValue:
		return appendNumber(b, k.NumberValue)
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), nil
	}
	return append(b, "null"...), nil
}

// appendNumber writes f as encoding/json does: whole numbers without an
// exponent below 1e21, so they read back into integer fields.
func appendNumber(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errors.Errorf(errFmtNotFinite, f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Protobuf strings are valid UTF-8,
// so only quotes, backslashes and control characters are escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := range len(s) {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// structAt is the object at a path of fields in s; nil when there is none.
func structAt(s *structpb.Struct, path ...string) *structpb.Struct {
	for _, f := range path {
		s = s.GetFields()[f].GetStructValue()
	}
	return s
}

// stringAt is the string at a path of fields in s; empty when there is none.
func stringAt(s *structpb.Struct, path ...string) string {
	last := len(path) - 1
	return structAt(s, path[:last]...).GetFields()[path[last]].GetStringValue()
}

// pick is a Struct of the fields of s that keys name, sharing their values.
func pick(s *structpb.Struct, keys ...string) *structpb.Struct {
	picked := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(keys))}
	for _, k := range keys {
		if v, ok := s.GetFields()[k]; ok {
			picked.Fields[k] = v
		}
	}
	return picked
}
