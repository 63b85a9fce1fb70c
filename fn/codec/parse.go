package codec

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// lenRoom is the room a message's length gets before the message is
// written: two bytes hold any length below 16 KiB, which nearly every one
// is, so few messages move once their length is known.
const lenRoom = 2

// A Parser parses JSON documents, such as encoding/json writes, into
// the protobuf encoding of Structs, without a message per value in between.
// A composed resource of the answer carries that encoding as it is, for
// gRPC to send as its Struct field.
type Parser struct {
	data []byte
	pos  int

	// wire is what the parser is writing.
	wire []byte
	// Lease holds what it wrote until the answer is encoded; nil copies
	// each encoding out at its length.
	Lease *Lease
	// Verbatim are strings of data whose text is known, in order: each is
	// copied, not unescaped.
	Verbatim []render.Verbatim
}

// Resource is a composed Resource whose Struct holds v, anything
// encoding/json writes as an object, with only the top-level fields keep
// admits. The Struct is carried in the encoding gRPC sends: it is read after
// a trip through the wire format, as Crossplane reads it.
func (p *Parser) Resource(v any, keep func(key []byte) bool) (*fnv1.Resource, error) {
	var r *fnv1.Resource
	err := encoded(v, func(data []byte) error {
		var err error
		r, err = p.ResourceOf(data, keep, nil)
		return err
	})
	return r, errors.Wrapf(err, errFmtEncode, v)
}

// ResourceOf is a composed resource whose Struct holds data, one JSON
// object, with only the top-level fields keep admits and add added.
func (p *Parser) ResourceOf(data []byte, keep func(key []byte) bool, add *Addition) (*fnv1.Resource, error) {
	wire, err := p.encode(data, keep, true, add)
	if err != nil {
		return nil, err
	}
	r := &fnv1.Resource{}
	r.ProtoReflect().SetUnknown(wire)
	return r, nil
}

// An Addition is a string member a parse adds to the object at path below
// the document's top level, making the objects on the way that the
// document lacks. A member of the same key that the document holds comes
// first, and protobuf's map fields keep the last of a key.
type Addition struct {
	Path       []string
	Key, Value string
}

// Marshal is v, anything encoding/json writes as an object, in the
// encoding of its Struct.
func (p *Parser) Marshal(v any) (Object, error) {
	var o Object
	err := encoded(v, func(b []byte) error {
		var err error
		o, err = p.Parse(b)
		return err
	})
	return o, errors.Wrapf(err, errFmtEncode, v)
}

// Parse is the encoding of data, which must be one JSON object.
func (p *Parser) Parse(data []byte) (Object, error) {
	return p.encode(data, nil, false, nil)
}

// encode is the encoding of the Struct of data, which must be one JSON
// object, with only the top-level fields keep admits and add, if any,
// added; as the field of a Resource that carries it when resource is true.
// Its length is known only once it is written, so it is written in a
// pooled buffer, which the parser's lease keeps for the answer.
func (p *Parser) encode(data []byte, keep func(key []byte) bool, resource bool, add *Addition) ([]byte, error) {
	buf := borrow()
	p.wire = *buf
	at := 0
	if resource {
		at = p.open(numResource)
	}
	err := p.document(data, keep, add)
	if err == nil && resource {
		p.close(at)
	}
	// A buffer grown stays grown for the next.
	*buf, p.wire = p.wire, nil
	if err != nil {
		buffers.Put(buf)
		return nil, err
	}
	return p.Lease.keep(buf), nil
}

// encoded calls fn with v written as JSON.
func encoded(v any, fn func([]byte) error) error {
	buf := borrow()
	defer buffers.Put(buf)
	// Escaping <, > and & would only make more strings to unescape.
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return fn(*buf)
}

// document appends the encoding of the Struct of data, which must be one
// object, with only the top-level fields keep admits (nil keeps all) and
// add, if any, added.
func (p *Parser) document(data []byte, keep func(key []byte) bool, add *Addition) error {
	p.data, p.pos = data, 0
	// data is lent: nothing may read it once the document is written.
	defer func() { p.data = nil }()
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return p.notObject()
	}
	if err := p.object(keep, add, 0); err != nil {
		return err
	}
	if p.space(); p.pos != len(p.data) {
		return p.syntax()
	}
	return nil
}

// open appends the tag of a length-delimited field and room for its
// length, and returns where the room is.
func (p *Parser) open(num protowire.Number) int {
	p.wire = protowire.AppendTag(p.wire, num, protowire.BytesType)
	at := len(p.wire)
	p.wire = append(p.wire, make([]byte, lenRoom)...)
	return at
}

// close writes the length of what was appended since open into the room at
// at, moving it when the length takes more or less room.
func (p *Parser) close(at int) {
	n := len(p.wire) - at - lenRoom
	size := protowire.SizeVarint(uint64(n)) //nolint:gosec // A length is not negative.
	switch {
	case size > lenRoom:
		p.wire = append(p.wire, make([]byte, size-lenRoom)...)
		copy(p.wire[at+size:], p.wire[at+lenRoom:at+lenRoom+n])
	case size < lenRoom:
		copy(p.wire[at+size:], p.wire[at+lenRoom:])
		p.wire = p.wire[:at+size+n]
	}
	protowire.AppendVarint(p.wire[:at], uint64(n)) //nolint:gosec // A length is not negative.
}

func (p *Parser) syntax() error { return errors.Errorf(errFmtJSON, p.pos) }

func (p *Parser) notObject() error {
	end := min(p.pos+1, len(p.data))
	return errors.Errorf(errFmtNotObject, p.data[p.pos:end], p.pos)
}

func (p *Parser) space() {
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
func (p *Parser) consume(c byte) bool {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// value appends the fields of the Value message of the value at pos, an
// object with add added, if any, at depth of its path.
func (p *Parser) value(add *Addition, depth int) error {
	p.space()
	if p.pos >= len(p.data) {
		return p.syntax()
	}
	switch c := p.data[p.pos]; c {
	case '{':
		at := p.open(numValueStruct)
		if err := p.object(nil, add, depth); err != nil {
			return err
		}
		p.close(at)
	case '[':
		at := p.open(numValueList)
		if err := p.list(); err != nil {
			return err
		}
		p.close(at)
	case '"':
		return p.str(numValueString)
	case 't', 'f':
		b, err := p.boolean()
		if err != nil {
			return err
		}
		p.wire = protowire.AppendTag(p.wire, numValueBool, protowire.VarintType)
		p.wire = protowire.AppendVarint(p.wire, protowire.EncodeBool(b))
	case 'n':
		if !p.literal("null") {
			return p.syntax()
		}
		p.wire = protowire.AppendTag(p.wire, numValueNull, protowire.VarintType)
		p.wire = protowire.AppendVarint(p.wire, uint64(structpb.NullValue_NULL_VALUE))
	default:
		f, err := p.number()
		if err != nil {
			return err
		}
		p.wire = protowire.AppendTag(p.wire, numValueNumber, protowire.Fixed64Type)
		p.wire = protowire.AppendFixed64(p.wire, math.Float64bits(f))
	}
	return nil
}

// object appends the fields of the Struct message of the object at pos: a
// map entry per member whose key keep admits (nil admits all), and add, if
// any, where the object is depth steps down its path.
func (p *Parser) object(keep func(key []byte) bool, add *Addition, depth int) error {
	p.pos++
	// placed is true once the member add goes into is found.
	placed := add == nil || depth == len(add.Path)
	if p.consume('}') {
		p.added(add, depth, placed)
		return nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.syntax()
		}
		start := len(p.wire)
		entry := p.open(numStructFields)
		key := len(p.wire)
		if err := p.str(numEntryKey); err != nil {
			return err
		}
		kept := keep == nil || keep(p.keyAt(key))
		if !p.consume(':') {
			return p.syntax()
		}
		var into *Addition
		if !placed && string(p.keyAt(key)) == add.Path[depth] {
			if p.space(); p.pos < len(p.data) && p.data[p.pos] == '{' {
				into, placed = add, true
			}
		}
		at := p.open(numEntryValue)
		if err := p.value(into, depth+1); err != nil {
			return err
		}
		p.close(at)
		p.close(entry)
		if !kept {
			p.wire = p.wire[:start]
		}
		if p.consume('}') {
			p.added(add, depth, placed)
			return nil
		}
		if !p.consume(',') {
			return p.syntax()
		}
	}
}

// added appends what add adds to an object that ends depth steps down its
// path: its member, or, where no member of the object leads on to it, the
// objects on the rest of the way. Nothing when placed says a member did.
func (p *Parser) added(add *Addition, depth int, placed bool) {
	switch {
	case add == nil:
	case depth == len(add.Path):
		p.member(add.Key, func() {
			p.wire = protowire.AppendTag(p.wire, numValueString, protowire.BytesType)
			p.wire = protowire.AppendString(p.wire, add.Value)
		})
	case !placed:
		p.member(add.Path[depth], func() {
			at := p.open(numValueStruct)
			p.added(add, depth+1, false)
			p.close(at)
		})
	}
}

// member appends a map entry of key, whose Value value writes.
func (p *Parser) member(key string, value func()) {
	entry := p.open(numStructFields)
	p.wire = protowire.AppendTag(p.wire, numEntryKey, protowire.BytesType)
	p.wire = protowire.AppendString(p.wire, key)
	at := p.open(numEntryValue)
	value()
	p.close(at)
	p.close(entry)
}

// keyAt is the key str wrote at at.
func (p *Parser) keyAt(at int) []byte {
	_, _, n := protowire.ConsumeTag(p.wire[at:])
	key, _ := protowire.ConsumeBytes(p.wire[at+n:])
	return key
}

// list appends the fields of the ListValue message of the array at pos.
func (p *Parser) list() error {
	p.pos++
	if p.consume(']') {
		return nil
	}
	for {
		at := p.open(numListValues)
		if err := p.value(nil, 0); err != nil {
			return err
		}
		p.close(at)
		if p.consume(']') {
			return nil
		}
		if !p.consume(',') {
			return p.syntax()
		}
	}
}

// str appends the string at pos, unescaped, as field num; pos is at its
// opening quote.
func (p *Parser) str(num protowire.Number) error {
	// Unescaping the Python wrapper of a build context was a twelfth of a
	// pass after a build; render says where it is, and what it says.
	for len(p.Verbatim) > 0 && p.Verbatim[0].At < p.pos {
		p.Verbatim = p.Verbatim[1:]
	}
	if len(p.Verbatim) > 0 && p.Verbatim[0].At == p.pos {
		v := p.Verbatim[0]
		p.wire = protowire.AppendTag(p.wire, num, protowire.BytesType)
		p.wire = protowire.AppendString(p.wire, v.Text)
		p.pos = v.End
		return nil
	}
	at := p.open(num)
	p.pos++
	for {
		start := p.pos
		p.pos = plainUntil(p.data, p.pos)
		p.wire = append(p.wire, p.data[start:p.pos]...)
		if p.pos == len(p.data) || p.data[p.pos] < 0x20 {
			return p.syntax()
		}
		if p.data[p.pos] == '"' {
			p.pos++
			p.close(at)
			return nil
		}
		// Code escapes a newline or a quote every few bytes: those are read
		// here, the rest by escape.
		if p.pos+1 < len(p.data) {
			if u := unescaped[p.data[p.pos+1]]; u != 0 {
				p.wire = append(p.wire, u)
				p.pos += 2
				continue
			}
		}
		r, ok := p.escape()
		if !ok {
			return p.syntax()
		}
		p.wire = utf8.AppendRune(p.wire, r)
	}
}

// unescaped is the byte each one-byte escape stands for, by the byte after
// its backslash; 0 for any other.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Eight bytes at a time, as plainUntil reads them: each constant repeats
// one byte.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
	swarQuote = '"' * swarOnes
	swarSlash = '\\' * swarOnes
)

// plainUntil is the first index from i of a byte that ends a string's plain
// run: a quote, a backslash or a control character, else len(data). Code
// and templates are most of what a composed resource's strings hold, so
// the run is read eight bytes at a time: a byte is one of the three exactly
// when the word, compared with each, has a zero byte or one below 0x20,
// and the lowest such byte is where the run ends.
func plainUntil(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		if ends := below(w^swarQuote, 1) | below(w^swarSlash, 1) | below(w, 0x20); ends != 0 {
			return i + bits.TrailingZeros64(ends)/8
		}
	}
	for i < len(data) && data[i] >= 0x20 && data[i] != '"' && data[i] != '\\' {
		i++
	}
	return i
}

// below is non-zero when a byte of w is below n, for n at most 0x80: it
// sets the high bit of the first such byte, in little-endian order (and
// maybe of later ones).
func below(w uint64, n uint64) uint64 {
	return (w - n*swarOnes) &^ w & swarHighs
}

// escape reads the escape at pos, as encoding/json does: a lone or
// mismatched surrogate is the replacement character.
func (p *Parser) escape() (rune, bool) {
	if p.pos+1 >= len(p.data) {
		return 0, false
	}
	c := p.data[p.pos+1]
	p.pos += 2
	if u := unescaped[c]; u != 0 {
		return rune(u), true
	}
	if c != 'u' {
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
func (p *Parser) hex4(i int) (rune, bool) {
	if len(p.data)-i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[i:i+4]), 16, 32)
	return rune(n), err == nil //nolint:gosec // Four hex digits: at most 0xFFFF.
}

func (p *Parser) literal(word string) bool {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

func (p *Parser) boolean() (bool, error) {
	switch {
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	}
	return false, p.syntax()
}

// number parses a number; strconv refuses what is not one.
func (p *Parser) number() (float64, error) {
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		p.pos++
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.pos]), 64)
	if err != nil || start == p.pos {
		p.pos = start
		return 0, p.syntax()
	}
	return f, nil
}
