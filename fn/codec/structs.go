package codec

import (
	"math"
	"strconv"
	"sync"

	kjson "sigs.k8s.io/json"

	"github.com/crossplane/function-sdk-go/errors"
)

// The function's requests and answers carry objects as protobuf Structs, a
// message per JSON value. The SDK converts them through maps both ways, and
// typed objects through maps again, which was most of a pass's time and
// allocations. These conversions go through JSON instead, from and to the
// Structs' encoding (wire.go): typed objects are written by encoding/json
// and parsed into it (parse.go), and what a pass reads is written as JSON
// from it and read into typed objects by the API machinery's own
// case-sensitive decoder.

const (
	errFmtEncode    = "cannot encode %T"
	errFmtDecode    = "cannot decode into %T"
	errFmtJSON      = "invalid JSON at byte %d"
	errFmtNotObject = "want a JSON object, got %q at byte %d"
	errFmtNotFinite = "cannot write the number %v as JSON"
	errFmtStrict    = "unknown or duplicate fields in %T: %v"
)

// A Selection names the members of an object a pass reads: each it maps
// to nil whole, each it maps to a Selection only in part. A nil Selection
// names every member. Decoding what a pass never reads, such as the labels
// and annotations of an observed object, cost more than the rest of it.
type Selection map[string]Selection

// Decode reads o into v as the API server would read its JSON:
// field names match case-sensitively and unknown fields are left out. Only
// the members sel names are read.
func Decode(o Object, v any, sel Selection) error {
	return withJSON(o, sel, func(b []byte) error {
		return errors.Wrapf(kjson.UnmarshalCaseSensitivePreserveInts(b, v), errFmtDecode, v)
	})
}

// DecodeStrict reads o into v, refusing unknown and duplicate fields.
func DecodeStrict(o Object, v any) error {
	return withJSON(o, nil, func(b []byte) error {
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

// buffers are reused for what is read as soon as it is written: JSON that
// is parsed or decoded (the parser and the decoders copy what they keep),
// and encodings copied out at their length.
var buffers = sync.Pool{New: func() any { return new(byteSink) }}

// borrow is an empty pooled buffer, to be put back into buffers once read;
// a buffer grown stays grown for the next.
func borrow() *byteSink {
	buf := buffers.Get().(*byteSink) //nolint:forcetypeassert // The pool holds nothing else.
	*buf = (*buf)[:0]
	return buf
}

// withJSON calls fn with o written as JSON, with only the members sel
// names.
func withJSON(o Object, sel Selection, fn func([]byte) error) error {
	buf := borrow()
	defer buffers.Put(buf)
	b, err := appendObject(*buf, o, sel)
	if err != nil {
		return err
	}
	*buf = b
	return fn(b)
}

// appendObject writes o as a JSON object, with only the members sel names.
func appendObject(b []byte, o Object, sel Selection) ([]byte, error) {
	b = append(b, '{')
	first := true
	var err error
	o.Entries(func(k []byte, v Value, _ []byte) bool {
		part, ok := sel[string(k)]
		if sel != nil && !ok {
			return true
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		if kind, c, _ := v.kind(); part != nil && kind == numValueStruct {
			b, err = appendObject(b, Object(c), part)
		} else {
			b, err = appendValue(b, v)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendValue writes v as JSON; a Value without a kind is null.
func appendValue(b []byte, v Value) ([]byte, error) {
	kind, c, n := v.kind()
	switch kind {
	case numValueStruct:
		return appendObject(b, Object(c), nil)
	case numValueList:
		b = append(b, '[')
		first := true
		var err error
		v.List(func(e Value) bool {
			if !first {
				b = append(b, ',')
			}
			first = false
			b, err = appendValue(b, e)
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		return append(b, ']'), nil
	case numValueString:
		return appendString(b, c), nil
	case numValueNumber:
		return appendNumber(b, math.Float64frombits(n))
	case numValueBool:
		return strconv.AppendBool(b, n != 0), nil
	default:
		return append(b, "null"...), nil
	}
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
func appendString[S string | []byte](b []byte, s S) []byte {
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
