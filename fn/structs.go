package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"google.golang.org/protobuf/types/known/structpb"
	kjson "sigs.k8s.io/json"

	"github.com/crossplane/function-sdk-go/errors"
)

// The function's requests and answers carry objects as protobuf Structs, a
// message per JSON value. The SDK converts them through maps both ways, and
// typed objects through maps again, which was most of a pass's time and
// allocations. These conversions go through JSON instead: typed objects are
// written by encoding/json and parsed into Structs whose messages come from
// slabs, and Structs are written as JSON and read into typed objects by the
// API machinery's own case-sensitive decoder.

const (
	errFmtEncode    = "cannot encode %T"
	errFmtDecode    = "cannot decode into %T"
	errFmtJSON      = "invalid JSON at byte %d"
	errFmtNotObject = "want a JSON object, got %q at byte %d"
	errFmtNotFinite = "cannot write the number %v as JSON"
	errFmtStrict    = "unknown or duplicate fields in %T: %v"
)

// structOf encodes v, anything encoding/json writes as an object, as a
// Struct from this parser's slabs, which every Struct it makes shares.
func (p *structParser) structOf(v any) (*structpb.Struct, error) {
	buf := jsonBuffers.Get().(*byteSink) //nolint:forcetypeassert // The pool holds nothing else.
	defer jsonBuffers.Put(buf)
	*buf = (*buf)[:0]
	// Escaping <, > and & would only make more strings to unescape.
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, errors.Wrapf(err, errFmtEncode, v)
	}
	p.data, p.text, p.pos = *buf, string(*buf), 0
	s, err := p.document()
	return s, errors.Wrapf(err, errFmtEncode, v)
}

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
// parser copies the text it keeps, and the decoders what they keep.
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

// A slab hands out values of one type from a few large allocations instead
// of one each. Everything it hands out lives as long as the answer that
// holds it.
type slab[T any] struct {
	free []T
	next int
}

// slabMax bounds a slab's allocations, which double from slabMin.
const (
	slabMin = 16
	slabMax = 512
)

func (s *slab[T]) get() *T {
	if len(s.free) == 0 {
		s.next = min(max(2*s.next, slabMin), slabMax)
		s.free = make([]T, s.next)
	}
	t := &s.free[0]
	s.free = s.free[1:]
	return t
}

// A field is a key and value of an object being parsed.
type field struct {
	key   string
	value *structpb.Value
}

// A structParser parses one JSON document, such as encoding/json writes,
// into Structs. Strings without escapes are substrings of text, one copy of
// the document.
type structParser struct {
	data []byte
	text string
	pos  int

	values  slab[structpb.Value]
	structs slab[structpb.Struct]
	lists   slab[structpb.ListValue]
	ofS     slab[structpb.Value_StructValue]
	ofL     slab[structpb.Value_ListValue]
	strs    slab[structpb.Value_StringValue]
	nums    slab[structpb.Value_NumberValue]
	bools   slab[structpb.Value_BoolValue]
	nulls   slab[structpb.Value_NullValue]

	// fields and elems are stacks of the objects' and lists' members being
	// parsed; a finished object or list takes its own off the top.
	fields []field
	elems  []*structpb.Value
}

// document parses the whole of data, which must be one object.
func (p *structParser) document() (*structpb.Struct, error) {
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return nil, p.notObject()
	}
	s, err := p.object()
	if err != nil {
		return nil, err
	}
	if p.space(); p.pos != len(p.data) {
		return nil, p.syntax()
	}
	return s, nil
}

func (p *structParser) syntax() error { return errors.Errorf(errFmtJSON, p.pos) }

func (p *structParser) notObject() error {
	end := min(p.pos+1, len(p.data))
	return errors.Errorf(errFmtNotObject, p.data[p.pos:end], p.pos)
}

func (p *structParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// consume skips space and c, and says whether c was there.
func (p *structParser) consume(c byte) bool {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *structParser) value() (*structpb.Value, error) {
	p.space()
	if p.pos >= len(p.data) {
		return nil, p.syntax()
	}
	v := p.values.get()
	var err error
	switch c := p.data[p.pos]; c {
	case '{':
		k := p.ofS.get()
		k.StructValue, err = p.object()
		v.Kind = k
	case '[':
		k := p.ofL.get()
		k.ListValue, err = p.list()
		v.Kind = k
	case '"':
		k := p.strs.get()
		k.StringValue, err = p.str()
		v.Kind = k
	case 't', 'f':
		k := p.bools.get()
		k.BoolValue, err = p.boolean()
		v.Kind = k
	case 'n':
		if !p.literal("null") {
			err = p.syntax()
		}
		v.Kind = p.nulls.get()
	default:
		k := p.nums.get()
		k.NumberValue, err = p.number()
		v.Kind = k
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// object parses an object; pos is at its brace.
func (p *structParser) object() (*structpb.Struct, error) {
	p.pos++
	base := len(p.fields)
	if !p.consume('}') {
		for {
			p.space()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return nil, p.syntax()
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			if !p.consume(':') {
				return nil, p.syntax()
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			p.fields = append(p.fields, field{key: k, value: v})
			if p.consume('}') {
				break
			}
			if !p.consume(',') {
				return nil, p.syntax()
			}
		}
	}
	s := p.structs.get()
	s.Fields = make(map[string]*structpb.Value, len(p.fields)-base)
	for _, f := range p.fields[base:] {
		s.Fields[f.key] = f.value
	}
	p.fields = p.fields[:base]
	return s, nil
}

// list parses an array; pos is at its bracket.
func (p *structParser) list() (*structpb.ListValue, error) {
	p.pos++
	base := len(p.elems)
	if !p.consume(']') {
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			p.elems = append(p.elems, v)
			if p.consume(']') {
				break
			}
			if !p.consume(',') {
				return nil, p.syntax()
			}
		}
	}
	l := p.lists.get()
	l.Values = make([]*structpb.Value, len(p.elems)-base)
	copy(l.Values, p.elems[base:])
	p.elems = p.elems[:base]
	return l, nil
}

// str parses a string; pos is at its opening quote.
func (p *structParser) str() (string, error) {
	p.pos++
	start := p.pos
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return p.text[start : p.pos-1], nil
		case c == '\\':
			return p.escaped(start - 1)
		case c < 0x20:
			return "", p.syntax()
		}
		p.pos++
	}
	return "", p.syntax()
}

// escaped parses the rest of a string whose first escape is at pos, from
// its opening quote at quote. Objects hold escapes rarely: in a Dockerfile,
// code, a template.
func (p *structParser) escaped(quote int) (string, error) {
	// The raw text bounds the string's length: one allocation holds it.
	end := p.pos
	for end < len(p.data) && p.data[end] != '"' {
		if p.data[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(end - quote)
	b.WriteString(p.text[quote+1 : p.pos])
	for p.pos < len(p.data) {
		start := p.pos
		for p.pos < len(p.data) && p.data[p.pos] >= 0x20 && p.data[p.pos] != '"' && p.data[p.pos] != '\\' {
			p.pos++
		}
		b.WriteString(p.text[start:p.pos])
		if p.pos == len(p.data) || p.data[p.pos] < 0x20 {
			break
		}
		if p.data[p.pos] == '"' {
			p.pos++
			return b.String(), nil
		}
		r, ok := p.escape()
		if !ok {
			break
		}
		b.WriteRune(r)
	}
	return "", p.syntax()
}

// escape reads the escape at pos, as encoding/json does: a lone or
// mismatched surrogate is the replacement character.
func (p *structParser) escape() (rune, bool) {
	if p.pos+1 >= len(p.data) {
		return 0, false
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
	default:
		return 0, false
	}
	r, ok := p.hex4(p.pos)
	if !ok {
		return 0, false
	}
	p.pos += 4
	if !utf16.IsSurrogate(r) {
		return r, true
	}
	if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
		if r2, ok := p.hex4(p.pos + 2); ok {
			if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
				p.pos += 6
				return d, true
			}
		}
	}
	return unicode.ReplacementChar, true
}

// hex4 reads the four hex digits at i.
func (p *structParser) hex4(i int) (rune, bool) {
	if len(p.data)-i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(p.text[i:i+4], 16, 32)
	return rune(n), err == nil //nolint:gosec // Four hex digits: at most 0xFFFF.
}

func (p *structParser) literal(word string) bool {
	if len(p.data)-p.pos < len(word) || p.text[p.pos:p.pos+len(word)] != word {
		return false
	}
	p.pos += len(word)
	return true
}

func (p *structParser) boolean() (bool, error) {
	switch {
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	}
	return false, p.syntax()
}

// number parses a number; strconv refuses what is not one.
func (p *structParser) number() (float64, error) {
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		p.pos++
	}
	f, err := strconv.ParseFloat(p.text[start:p.pos], 64)
	if err != nil || start == p.pos {
		p.pos = start
		return 0, p.syntax()
	}
	return f, nil
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
