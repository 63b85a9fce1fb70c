package main

import (
	"bytes"
	"maps"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestStructOfRendered compares the Struct of every object render makes
// with what the SDK's way, typed object to map to Struct, made of it.
func TestStructOfRendered(t *testing.T) {
	spec := parseSpec(t, helloSpec)
	building := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}})
	built := mustRender(t, render.FunctionInput{
		Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry},
		Observed: render.Observed{Build: &render.Pushed{Identity: building.BuildIdentity, Digest: testDigest}},
	})
	objs := append(building.All(), built.All()...)
	if len(objs) < 6 {
		t.Fatalf("render made %d objects, want at least 6", len(objs))
	}
	for _, o := range objs {
		t.Run(o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName(), func(t *testing.T) {
			enc, err := new(codec.Parser).Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(toStruct(t, o), codectest.StructIn(t, enc), protocmp.Transform()); diff != "" {
				t.Errorf("marshal(): -via a map, +got:\n%s", diff)
			}

			// As a composed resource, the same Struct but what a client
			// does not send, read as Crossplane reads it.
			r, err := new(codec.Parser).Resource(o, sentKey)
			if err != nil {
				t.Fatal(err)
			}
			want := toStruct(t, o)
			maps.DeleteFunc(want.Fields, func(field string, _ *structpb.Value) bool { return !render.Sent(field) })
			if diff := cmp.Diff(&fnv1.Resource{Resource: want}, codectest.OnWire(t, r), protocmp.Transform()); diff != "" {
				t.Errorf("resource(): -via a map, +got:\n%s", diff)
			}
		})
	}
}

// TestDecodeStruct compares decoding a Struct with the SDK's way, Struct to
// map to typed object.
func TestDecodeStruct(t *testing.T) {
	pod := podTerminated(t, "hello-build-1", 0, testDigest)
	job := jobWithStatus(t, mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: parseSpec(t, helloSpec), Defaults: render.Defaults{Registry: testRegistry}}).BuildJob, finished(batchv1.JobComplete))
	cases := map[string]struct {
		reason string
		in     *structpb.Struct
		into   func() any
	}{
		"Pod": {
			reason: "A build pod with its termination message.",
			in:     pod,
			into:   func() any { return &corev1.Pod{} },
		},
		"Job": {
			reason: "A build Job with its status, times included.",
			in:     job,
			into:   func() any { return &batchv1.Job{} },
		},
		"CaseAndUnknown": {
			reason: "Field names match case-sensitively and unknown fields are left out, as the API server reads them.",
			in:     codectest.Struct(t, `{"Metadata":{"name":"x"},"metadata":{"name":"y","unknown":1},"spec":{"parallelism":2,"backoffLimit":1e3}}`),
			into:   func() any { return &batchv1.Job{} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, want := tc.into(), tc.into()
			if err := codec.Decode(codec.Object(codectest.Encoded(t, tc.in)), got, nil); err != nil {
				t.Fatalf("%s\nDecode(): %v", tc.reason, err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tc.in.AsMap(), want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDecode(): -via a map, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestParseVerbatim reads a string render wrote from a runtime file as its
// text, not by unescaping it, and to the same encoding.
func TestParseVerbatim(t *testing.T) {
	var lent int
	lend := func(o kube.Object, json []byte, verbatim []render.Verbatim) error {
		lent += len(verbatim)
		with := &codec.Parser{Verbatim: verbatim}
		got, err := with.Parse(json)
		if err != nil {
			t.Fatal(err)
		}
		want, err := (&codec.Parser{}).Parse(json)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("the %s parsed with its verbatim strings differs from the one parsed without", o.GetObjectKind().GroupVersionKind().Kind)
		}
		return nil
	}
	spec := parseSpec(t, helloSpec)
	if _, err := render.FunctionEncoded(render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}}, lend); err != nil {
		t.Fatal(err)
	}
	if lent == 0 {
		t.Fatal("render lent no verbatim strings for a build context")
	}

	// A verbatim string is taken as it says, and one behind the parser is
	// passed over.
	doc := []byte(`{"a":"x\ny","b":"z"}`)
	p := &codec.Parser{Verbatim: []render.Verbatim{{At: 0, End: 1, Text: "passed"}, {At: 5, End: 11, Text: "taken"}}}
	got, err := p.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := &structpb.Struct{}
	if err := proto.Unmarshal(got, s); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"a": "taken", "b": "z"}, s.AsMap()); diff != "" {
		t.Errorf("parse with verbatim strings: -want, +got:\n%s", diff)
	}
}
