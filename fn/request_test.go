package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

// TestDecodedRequestsAnswerAlike runs passes of requests whose Structs were
// decoded, as the SDK's v1beta1 server and other callers hand them over,
// and of the same requests as the gRPC server reads them: the answers are
// the same.
func TestDecodedRequestsAnswerAlike(t *testing.T) {
	f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
	for name, b := range codectest.Requests(t, builtRequest(t)) {
		if name == "Empty" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			decoded := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(b, decoded); err != nil {
				t.Fatal(err)
			}
			want, err := f.RunFunction(context.Background(), decoded)
			if err != nil {
				t.Fatal(err)
			}
			got, err := run(t, f, decoded)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range want.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					t.Fatalf("the pass failed: %s", r.GetMessage())
				}
			}
			if diff := cmp.Diff(codectest.OnWire(t, want), got, protocmp.Transform()); diff != "" {
				t.Errorf("RunFunction(): -decoded request, +read request:\n%s", diff)
			}
		})
	}
}

// TestEarlierStepsKept runs a pass after earlier steps of a pipeline wrote
// the composite and a composed resource: theirs stays, and ours is laid
// over the composite's status field by field.
func TestEarlierStepsKept(t *testing.T) {
	req := builtRequest(t)
	req.Desired = &fnv1.State{
		Composite: &fnv1.Resource{
			Resource:          codectest.Struct(t, `{"metadata":{"labels":{"team":"a"}},"status":{"earlier":"step","phase":"Old","image":"old"}}`),
			ConnectionDetails: map[string][]byte{"k": []byte("v")},
		},
		Resources: map[string]*fnv1.Resource{"earlier": {Resource: codectest.Struct(t, `{"kind":"ConfigMap","data":{"a":"b"}}`), Ready: fnv1.Ready_READY_TRUE}},
	}
	rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
	if err != nil {
		t.Fatal(err)
	}
	xr := rsp.GetDesired().GetComposite()
	status := xr.GetResource().GetFields()["status"].GetStructValue().GetFields()
	got := map[string]any{
		"label":      xr.GetResource().GetFields()["metadata"].GetStructValue().AsMap()["labels"],
		"earlier":    status["earlier"].GetStringValue(),
		"phase":      status["phase"].GetStringValue(),
		"connection": string(xr.GetConnectionDetails()["k"]),
		"resource":   rsp.GetDesired().GetResources()["earlier"].GetResource().AsMap(),
	}
	want := map[string]any{
		"label":      map[string]any{"team": "a"},
		"earlier":    "step",
		"phase":      "Deploying",
		"connection": "v",
		"resource":   map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "b"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunFunction(): -want, +got:\n%s", diff)
	}
	if status["image"].GetStringValue() == "old" {
		t.Errorf("RunFunction(): the earlier step's status.image stayed, want ours laid over it")
	}
}
