package codec

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
)

// TestResourceKeepsTopLevelFields checks that only top-level fields are
// left out of a composed resource: a field of the same name deeper stays.
func TestResourceKeepsTopLevelFields(t *testing.T) {
	in := map[string]any{"status": map[string]any{"a": 1}, "spec": map[string]any{"status": "deeper", "n": []any{1, "x"}}}
	r, err := new(Parser).Resource(in, func(key []byte) bool { return string(key) != "status" })
	if err != nil {
		t.Fatal(err)
	}
	want := codectest.Struct(t, `{"spec":{"status":"deeper","n":[1,"x"]}}`)
	if diff := cmp.Diff(&fnv1.Resource{Resource: want}, codectest.OnWire(t, r), protocmp.Transform()); diff != "" {
		t.Errorf("resource(): -want, +got:\n%s", diff)
	}
}

func TestResourceAdds(t *testing.T) {
	add := &Addition{Path: []string{"metadata", "annotations"}, Key: "k", Value: "v"}
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"IntoAnnotations": {
			reason: "The member joins the annotations the object has.",
			in:     `{"metadata":{"name":"a","annotations":{"x":"y"}},"spec":{}}`,
			want:   `{"metadata":{"name":"a","annotations":{"x":"y","k":"v"}},"spec":{}}`,
		},
		"EmptyAnnotations": {
			reason: "An empty object on the path takes the member.",
			in:     `{"metadata":{"annotations":{}}}`,
			want:   `{"metadata":{"annotations":{"k":"v"}}}`,
		},
		"NoAnnotations": {
			reason: "An object without annotations gets them, with the member alone.",
			in:     `{"metadata":{"name":"a","labels":{"x":"y"}}}`,
			want:   `{"metadata":{"name":"a","labels":{"x":"y"},"annotations":{"k":"v"}}}`,
		},
		"NoMetadata": {
			reason: "A document without metadata gets it, and annotations in it.",
			in:     `{"spec":{"metadata":{"annotations":{}}}}`,
			want:   `{"spec":{"metadata":{"annotations":{}}},"metadata":{"annotations":{"k":"v"}}}`,
		},
		"EmptyDocument": {
			reason: "An empty document gets the whole path.",
			in:     `{}`,
			want:   `{"metadata":{"annotations":{"k":"v"}}}`,
		},
		"NullAnnotations": {
			reason: "Annotations that are null are not an object to add to: annotations holding the member follow them, and are the ones kept.",
			in:     `{"metadata":{"annotations":null}}`,
			want:   `{"metadata":{"annotations":{"k":"v"}}}`,
		},
		"SameKey": {
			reason: "A member of the same key comes first, and the added one is the one kept, as a stamp replaces what was there.",
			in:     `{"metadata":{"annotations":{"k":"old"}}}`,
			want:   `{"metadata":{"annotations":{"k":"v"}}}`,
		},
		"DeeperPathsAlone": {
			reason: "Only the path from the top level leads to the member: a template's metadata of the same names is left as it is.",
			in:     `{"spec":{"template":{"metadata":{"annotations":{"x":"y"}}}},"metadata":{"annotations":{"x":"y"}}}`,
			want:   `{"spec":{"template":{"metadata":{"annotations":{"x":"y"}}}},"metadata":{"annotations":{"x":"y","k":"v"}}}`,
		},
		"Escapes": {
			reason: "Members written with escapes, as encoding/json writes <, > and &, hold their text.",
			in:     `{"metadata":{"annotations":{"x":"\u003cy\u0026"}}}`,
			want:   `{"metadata":{"annotations":{"x":"<y&","k":"v"}}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := new(Parser).ResourceOf([]byte(tc.in), nil, add)
			if err != nil {
				t.Fatalf("%s\nresourceOf(): %v", tc.reason, err)
			}
			if diff := cmp.Diff(&fnv1.Resource{Resource: codectest.Struct(t, tc.want)}, codectest.OnWire(t, r), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nresourceOf(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestScan holds scan to next on every first two bytes of a field, each
// followed by too few bytes, exactly enough and more: scan's own reading
// of a one-byte tag and length must agree with protowire's in what it
// reads and in what it refuses.
func TestScan(t *testing.T) {
	for first := range 256 {
		for second := range 256 {
			for _, tail := range []int{0, 1, second - 1, second, second + 1, 200} {
				if tail < 0 {
					continue
				}
				b := append([]byte{byte(first), byte(second)}, bytes.Repeat([]byte{'x'}, tail)...)
				f, wantErr := next(b)
				num, typ, content, n, err := scan(b)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("scan(% x…): error %v, next: %v", b[:2], err, wantErr)
				}
				if err != nil {
					continue
				}
				if num != f.num || typ != f.typ || !bytes.Equal(content, f.content) || n != len(f.raw) {
					t.Fatalf("scan(% x…) = %d, %d, %d bytes of content, %d; next: %d, %d, %d, %d", b[:2], num, typ, len(content), n, f.num, f.typ, len(f.content), len(f.raw))
				}
			}
		}
	}
}

// TestWireFieldNumbers holds the parser's field numbers to the messages'
// own descriptors.
func TestWireFieldNumbers(t *testing.T) {
	field := func(m proto.Message, name string) protowire.Number {
		return m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)).Number()
	}
	entry := (&structpb.Struct{}).ProtoReflect().Descriptor().Fields().ByName("fields").Message()
	resources := (&fnv1.State{}).ProtoReflect().Descriptor().Fields().ByName("resources")
	got := map[string]protowire.Number{
		"Struct.fields": numStructFields, "entry.key": numEntryKey, "entry.value": numEntryValue,
		"Value.null_value": numValueNull, "Value.number_value": numValueNumber, "Value.string_value": numValueString,
		"Value.bool_value": numValueBool, "Value.struct_value": numValueStruct, "Value.list_value": numValueList,
		"ListValue.values": numListValues, "Resource.resource": numResource,
		"RunFunctionRequest.observed": numRequestObserved, "RunFunctionRequest.desired": numRequestDesired,
		"RunFunctionRequest.required_resources": numRequestRequired, "State.composite": numStateComposite,
		"RunFunctionRequest.input": numRequestInput, "RunFunctionRequest.context": numRequestContext,
		"State.resources": numStateResources, "Resources.items": numResourcesItems,
		"map entry key": numMapKey, "map entry value": numMapValue,
	}
	want := map[string]protowire.Number{
		"Struct.fields": field(&structpb.Struct{}, "fields"), "entry.key": entry.Fields().ByName("key").Number(), "entry.value": entry.Fields().ByName("value").Number(),
		"Value.null_value": field(&structpb.Value{}, "null_value"), "Value.number_value": field(&structpb.Value{}, "number_value"), "Value.string_value": field(&structpb.Value{}, "string_value"),
		"Value.bool_value": field(&structpb.Value{}, "bool_value"), "Value.struct_value": field(&structpb.Value{}, "struct_value"), "Value.list_value": field(&structpb.Value{}, "list_value"),
		"ListValue.values": field(&structpb.ListValue{}, "values"), "Resource.resource": field(&fnv1.Resource{}, "resource"),
		"RunFunctionRequest.observed": field(&fnv1.RunFunctionRequest{}, "observed"), "RunFunctionRequest.desired": field(&fnv1.RunFunctionRequest{}, "desired"),
		"RunFunctionRequest.required_resources": field(&fnv1.RunFunctionRequest{}, "required_resources"), "State.composite": field(&fnv1.State{}, "composite"),
		"RunFunctionRequest.input": field(&fnv1.RunFunctionRequest{}, "input"), "RunFunctionRequest.context": field(&fnv1.RunFunctionRequest{}, "context"),
		"State.resources": field(&fnv1.State{}, "resources"), "Resources.items": field(&fnv1.Resources{}, "items"),
		"map entry key": resources.MapKey().Number(), "map entry value": resources.MapValue().Number(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field numbers: -descriptors, +parser:\n%s", diff)
	}
}

// TestStructOfJSON compares the parser with protojson's on what
// encoding/json writes, and on documents it refuses.
func TestStructOfJSON(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		err    bool
	}{
		"Scalars": {
			reason: "Strings, numbers, booleans and null, in objects and lists.",
			in:     `{"s":"x","n":-12.5e3,"i":1700000000,"z":0,"t":true,"f":false,"null":null,"l":[1,"a",null,[],{}],"o":{}}`,
		},
		"Escapes": {
			reason: "Escaped quotes, backslashes, control characters and unicode, as a Dockerfile or code holds them.",
			in:     `{"code":"print(\"hi\")\n\tx = '\\\\'\u0001 \u00e9 \ud83d\ude00","plain é 😀":"ok"}`,
		},
		"Space": {
			reason: "Space between tokens, as a hand-written document has.",
			in:     " {\n \"a\" : [ 1 , 2 ] ,\t\"b\" : { } }\n",
		},
		"Nested": {
			reason: "Deep nesting keeps each object's fields its own.",
			in:     `{"a":{"b":{"c":[{"d":1},{"e":[{"f":"g"}]}]}},"h":{"i":2}}`,
		},
		"Lengths": {
			reason: "Messages whose lengths need one, two and three bytes, so each is moved once its length is known, or not.",
			in: `{"one":"` + strings.Repeat("a", 127) + `","two":"` + strings.Repeat("b", 128) + `","twoFull":"` + strings.Repeat("c", 16383) +
				`","three":"` + strings.Repeat("d", 16384) + `","nested":{"l":["` + strings.Repeat("e\\n", 9000) + `"]}}`,
		},
		"NotObject": {
			reason: "A document that is not an object is refused.",
			in:     `[1,2]`,
			err:    true,
		},
		"Trailing": {
			reason: "Anything after the object is refused.",
			in:     `{"a":1} {}`,
			err:    true,
		},
		"TrailingComma": {
			reason: "A comma before the brace is refused.",
			in:     `{"a":1,}`,
			err:    true,
		},
		"Unterminated": {
			reason: "A string without its closing quote is refused.",
			in:     `{"a":"b}`,
			err:    true,
		},
		"ControlCharacter": {
			reason: "A raw control character in a string is refused.",
			in:     "{\"a\":\"b\x01\"}",
			err:    true,
		},
		"BadLiteral": {
			reason: "A misspelled literal is refused.",
			in:     `{"a":nul}`,
			err:    true,
		},
		"BadNumber": {
			reason: "A number strconv cannot read is refused.",
			in:     `{"a":1e}`,
			err:    true,
		},
		"MissingColon": {
			reason: "A key without a colon is refused.",
			in:     `{"a" 1}`,
			err:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := new(Parser).Parse([]byte(tc.in))
			if tc.err {
				if err == nil {
					t.Errorf("%s\nparse(): no error, want one", tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nparse(): %v", tc.reason, err)
			}
			got := codectest.StructIn(t, o)
			want := &structpb.Struct{}
			if err := protojson.Unmarshal([]byte(tc.in), want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nparse(): -protojson, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// metadataInPart reads an object as the function reads what it observed:
// its metadata in part.
var metadataInPart = Selection{
	"apiVersion": nil, "kind": nil, "status": nil,
	"metadata": {"name": nil, "namespace": nil, "generation": nil},
}

// TestDecodeStructSelection reads only the members a selection names, at
// the top level and within them.
func TestDecodeStructSelection(t *testing.T) {
	const job = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"b","namespace":"n","generation":3,` +
		`"labels":{"l":"v"},"annotations":{"a":"v"}},"spec":{"parallelism":2},"status":{"succeeded":1}}`
	meta := metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
	cases := map[string]struct {
		reason  string
		in      string
		sel     Selection
		want    *batchv1.Job
		wantErr bool
	}{
		"All": {
			reason: "A nil selection reads every member.",
			in:     job, want: &batchv1.Job{
				TypeMeta:   meta,
				ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "n", Generation: 3, Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"}},
				Spec:       batchv1.JobSpec{Parallelism: ptr.To[int32](2)},
				Status:     batchv1.JobStatus{Succeeded: 1},
			},
		},
		"TopLevel": {
			reason: "A member mapped to nil is read whole, and the members not named are not read.",
			in:     job, sel: Selection{"status": nil}, want: &batchv1.Job{Status: batchv1.JobStatus{Succeeded: 1}},
		},
		"InPart": {
			reason: "A member mapped to a selection is read only in part: an observed object's labels and annotations are not read.",
			in:     job, sel: metadataInPart, want: &batchv1.Job{
				TypeMeta: meta, ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "n", Generation: 3},
				Status: batchv1.JobStatus{Succeeded: 1},
			},
		},
		"InPartNotAnObject": {
			reason: "A member read in part that is not an object is written whole, and the decoder refuses it as it would have.",
			in:     `{"metadata":"b"}`, sel: metadataInPart, wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := &batchv1.Job{}
			err := Decode(Object(codectest.Encoded(t, codectest.Struct(t, tc.in))), got, tc.sel)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nDecode(): %v, want error %t", tc.reason, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDecode(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecodeStrict reads the function's Input, whose unknown fields are
// mistakes a platform team must hear about.
func TestDecodeStrict(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   *v1beta1.Input
		err    bool
	}{
		"Known": {
			reason: "An Input with known fields is read.",
			in:     `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","mode":"Managed"}`,
			want:   &v1beta1.Input{Mode: v1beta1.ModeManaged},
		},
		"Unknown": {
			reason: "A misspelled field is refused.",
			in:     `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","mod":"Managed"}`,
			err:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := &v1beta1.Input{}
			err := DecodeStrict(Object(codectest.Encoded(t, codectest.Struct(t, tc.in))), got)
			if tc.err {
				if err == nil {
					t.Errorf("%s\nDecodeStrict(): no error, want one", tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nDecodeStrict(): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(v1beta1.Input{}, "TypeMeta")); diff != "" {
				t.Errorf("%s\nDecodeStrict(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestAppendJSON writes Values encoding/json must read back as they were.
func TestAppendJSON(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     *structpb.Value
		want   string
		err    bool
	}{
		"WholeNumber": {
			reason: "A whole number has no exponent, so it reads into an integer field.",
			in:     structpb.NewNumberValue(1700000000),
			want:   `1700000000`,
		},
		"Fraction": {
			reason: "A fraction keeps its digits.",
			in:     structpb.NewNumberValue(0.25),
			want:   `0.25`,
		},
		"Huge": {
			reason: "Beyond 1e21 an exponent is written, as encoding/json does.",
			in:     structpb.NewNumberValue(1e22),
			want:   `1e+22`,
		},
		"NotFinite": {
			reason: "JSON has no NaN.",
			in:     structpb.NewNumberValue(math.NaN()),
			err:    true,
		},
		"Escapes": {
			reason: "Quotes, backslashes and control characters are escaped; other UTF-8 is written as it is.",
			in:     structpb.NewStringValue("a\"b\\c\nd\te\x01é"),
			want:   `"a\"b\\c\nd\te\u0001é"`,
		},
		"Null": {
			reason: "A Value without a kind is null.",
			in:     &structpb.Value{},
			want:   `null`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := proto.Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendValue(nil, v)
			if tc.err {
				if err == nil {
					t.Errorf("%s\nappendValue(): no error, want one", tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nappendValue(): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s\nappendValue(): -want, +got:\n%s", tc.reason, diff)
			}
			var back any
			if err := json.Unmarshal(got, &back); err != nil {
				t.Errorf("%s\nencoding/json cannot read %s: %v", tc.reason, got, err)
			}
		})
	}
}

// TestPlainUntil finds where a string's plain run ends as a scan of one
// byte at a time does, from every offset, among every byte value.
func TestPlainUntil(t *testing.T) {
	var data []byte
	for c := range 256 {
		// Each value after a run of plain bytes of another length, so
		// that it falls at every place of a word.
		data = append(data, bytes.Repeat([]byte{'a'}, c%11)...)
		data = append(data, byte(c))
	}
	naive := func(i int) int {
		for i < len(data) && data[i] >= 0x20 && data[i] != '"' && data[i] != '\\' {
			i++
		}
		return i
	}
	for i := range len(data) + 1 {
		if got, want := plainUntil(data, i), naive(i); got != want {
			t.Fatalf("plainUntil(data, %d): got %d (byte %#x), want %d (byte %#x)", i, got, at(data, got), want, at(data, want))
		}
	}
}

// at is the byte at i, or -1 past the end.
func at(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	return int(data[i])
}

// TestParseString reads strings as encoding/json reads them.
func TestParseString(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		err    bool
	}{
		"Plain":          {reason: "A string without escapes is copied as it is.", in: `"plain é"`},
		"Escapes":        {reason: "Every escape JSON has.", in: `"\" \\ \/ \b \f \n \r \t \u0041 \u00e9"`},
		"SurrogatePair":  {reason: "A surrogate pair is one character.", in: `"\ud83d\ude00!"`},
		"LoneHigh":       {reason: "A lone high surrogate is the replacement character.", in: `"\ud83dx"`},
		"HighThenOther":  {reason: "A high surrogate before a character that is not a low one: the replacement character, then that character.", in: `"\ud83d\u0041"`},
		"LoneLow":        {reason: "A lone low surrogate is the replacement character.", in: `"\ude00"`},
		"UnknownEscape":  {reason: "An escape JSON does not have is refused.", in: `"\x41"`, err: true},
		"ShortUnicode":   {reason: "A \\u escape needs four hex digits.", in: `"\u12"`, err: true},
		"EndsInEscape":   {reason: "A document that ends inside an escape is refused.", in: `"\`, err: true},
		"Unterminated":   {reason: "A string with escapes and no closing quote is refused.", in: `"\n`, err: true},
		"ControlEscaped": {reason: "A raw control character after an escape is refused.", in: "\"\\n\x01\"", err: true},
		"LongPlain":      {reason: "A run longer than a word is read a word at a time, to its end.", in: `"def handler(event, context): return 1 + 2"`},
		"EscapeInWord":   {reason: "An escape inside a word that is read at once ends the run where it is.", in: `"0123456789\"abc\\def\nghijklmnopqrstuvwxyz"`},
		"NearQuotes":     {reason: "Bytes that differ from a quote or a backslash only in their high bit do not end a run.", in: `"¢¢¢¢¢¢¢¢ܐܐܐܐܐܐܐܐ ¢ܐ ok"`},
		"ControlInWord":  {reason: "A raw control character inside a word that is read at once is refused.", in: "\"0123456789ab\x1fcdefghijklmnop\"", err: true},
		"DeleteInWord":   {reason: "DEL is not a control character JSON refuses.", in: "\"0123456789ab\x7fcdefghijklmnop\""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &Parser{data: []byte(tc.in)}
			err := p.str(numValueString)
			if tc.err {
				if err == nil {
					t.Errorf("%s\nstr(): wrote %q, want an error", tc.reason, p.wire)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nstr(): %v", tc.reason, err)
			}
			num, typ, n := protowire.ConsumeTag(p.wire)
			b, m := protowire.ConsumeBytes(p.wire[max(n, 0):])
			if num != numValueString || typ != protowire.BytesType || m != len(p.wire)-n {
				t.Fatalf("%s\nstr() wrote %x, want one string field", tc.reason, p.wire)
			}
			got := string(b)
			var want string
			if err := json.Unmarshal([]byte(tc.in), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nstr(): -encoding/json, +got:\n%s", tc.reason, diff)
			}
			if p.pos != len(tc.in) {
				t.Errorf("%s\nstr() stopped at %d of %d", tc.reason, p.pos, len(tc.in))
			}
		})
	}
}

// TestObjectReadsAsProtobuf holds the object accessors to what protobuf
// reads from the same encoding: the last of a key that comes twice, and
// fields of the wrong type left out.
func TestObjectReadsAsProtobuf(t *testing.T) {
	wrongType := protowire.AppendVarint(protowire.AppendTag(nil, numValueString, protowire.VarintType), 7)
	o := Object(AppendEntry(AppendEntry(AppendEntry(AppendEntry(nil,
		"kind", StringValue("Job")),
		"kind", StringValue("Pod")),
		"status", ObjectValue(Object(AppendEntry(nil, "conditions", listValue(t, `[{"type":"Ready","status":"False"},{"type":"Complete","status":"True"}]`))))),
		"odd", wrongType))
	s := codectest.StructIn(t, o)
	if got, want := StringAt(o, "kind"), s.GetFields()["kind"].GetStringValue(); got != want {
		t.Errorf("StringAt(kind): got %q, protobuf reads %q", got, want)
	}
	var conditions []string
	list, _ := StructAt(o, "status").Get("conditions")
	list.List(func(c Value) bool {
		conditions = append(conditions, StringAt(c.Object(), "type")+"="+StringAt(c.Object(), "status"))
		return true
	})
	if diff := cmp.Diff([]string{"Ready=False", "Complete=True"}, conditions); diff != "" {
		t.Errorf("status.conditions: -want, +got:\n%s", diff)
	}
	if got, want := s.GetFields()["odd"].GetKind(), (*structpb.Value)(nil).GetKind(); got != want {
		t.Fatalf("protobuf reads the odd member as %v, want no kind", got)
	}
	b, err := appendObject(nil, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := Decode(o, &back, nil); err != nil {
		t.Fatalf("Decode(): %v (JSON %s)", err, b)
	}
	if diff := cmp.Diff(s.AsMap(), back); diff != "" {
		t.Errorf("Decode(): -protobuf, +got from JSON %s:\n%s", b, diff)
	}
}

// listValue is the Value encoding of a JSON list.
func listValue(t *testing.T, j string) []byte {
	t.Helper()
	s := codectest.Struct(t, `{"l":`+j+`}`)
	b, err := proto.Marshal(s.GetFields()["l"])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
