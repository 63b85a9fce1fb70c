package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
)

// goldenPasses are how many passes of each example goldenRequests makes:
// the first, the one with the resources it requires, and the one after
// that once its composed resources exist.
const goldenPasses = 3

// goldenRequests are the requests Crossplane sends for every example of the
// platform API in each mode, as TestCrossplaneRender renders them with the
// CLI, for goldenPasses passes, with the hand-made requests of codectest.Requests(t, builtRequest(t)):
// each encoded, by name. The answers that lead from one pass to the next
// come from the function serving requests protobuf decoded.
func goldenRequests(t testing.TB) map[string][]byte {
	t.Helper()
	f := &Function{log: logging.NewNopLogger(), sources: fixedSources}
	required := requiredObjects(t)
	examples, err := filepath.Glob(filepath.Join(repo, "examples", "platform", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := codectest.Requests(t, builtRequest(t))
	for _, ex := range examples {
		xr, ok := compositeOfExample(t, ex)
		if !ok {
			continue
		}
		kind := kindOf(t, xr)
		for _, mode := range []string{"direct", "managed"} {
			name := filepath.Base(filepath.Dir(ex)) + "-" + strings.TrimSuffix(filepath.Base(ex), ".yaml") + "-" + mode
			comp := filepath.Join(repo, "package", "configuration", "composition-"+strings.ToLower(kind)+"s-"+mode+".yaml")
			req := &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: name},
				Input:    stepInput(t, comp),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: yamlStruct(t, xr)}},
			}
			for pass := range goldenPasses {
				b, err := proto.Marshal(req)
				if err != nil {
					t.Fatal(err)
				}
				out[name+"-"+string(rune('1'+pass))] = b
				rsp, err := f.RunFunction(context.Background(), proto.CloneOf(req))
				if err != nil {
					t.Fatal(err)
				}
				req = proto.CloneOf(req)
				req.RequiredResources = requiredBy(t, rsp.GetRequirements(), required)
				if pass > 0 {
					req.Observed.Resources = rsp.GetDesired().GetResources()
				}
			}
		}
	}
	return out
}

// fixedSources resolves every git and S3 source to one identity, as a
// source that does not change between passes.
var fixedSources = SourceResolverFn(func(context.Context, v1alpha1.FunctionSource, map[string][]byte) (string, error) {
	return "0123456789abcdef0123456789abcdef01234567", nil
})

// stepInput is the Input of the function's step of a Composition.
func stepInput(t testing.TB, path string) *structpb.Struct {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var comp struct {
		Spec struct {
			Pipeline []struct {
				Input map[string]any `json:"input"`
			} `json:"pipeline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &comp); err != nil {
		t.Fatal(err)
	}
	if len(comp.Spec.Pipeline) != 1 {
		t.Fatalf("%s: %d steps, want the function's alone", path, len(comp.Spec.Pipeline))
	}
	s, err := structpb.NewStruct(comp.Spec.Pipeline[0].Input)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// yamlStruct is the Struct of one YAML object.
func yamlStruct(t testing.TB, y []byte) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal(y, &m); err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// requiredObjects are the objects TestCrossplaneRender gives the CLI as
// required resources.
func requiredObjects(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, path := range []string{
		filepath.Join(repo, "examples", "clusterproviderconfig.yaml"),
		filepath.Join(repo, "examples", "platform", "xrs", "namespace.yaml"),
		filepath.Join(repo, "examples", "platform", "claims", "namespace.yaml"),
		filepath.Join("testdata", "render", "required.yaml"),
	} {
		us, err := manifest.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, us...)
	}
	return objs
}

// requiredBy are the objects of objs that rs selects, as Crossplane reads
// them for the next pass.
func requiredBy(t testing.TB, rs *fnv1.Requirements, objs []*unstructured.Unstructured) map[string]*fnv1.Resources {
	t.Helper()
	out := map[string]*fnv1.Resources{}
	for name, sel := range rs.GetResources() {
		found := &fnv1.Resources{}
		for _, u := range objs {
			if !selects(sel, u) {
				continue
			}
			s, err := structpb.NewStruct(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			found.Items = append(found.Items, &fnv1.Resource{Resource: s})
		}
		out[name] = found
	}
	return out
}

// selects is whether sel selects u.
func selects(sel *fnv1.ResourceSelector, u *unstructured.Unstructured) bool {
	if sel.GetApiVersion() != u.GetAPIVersion() || sel.GetKind() != u.GetKind() {
		return false
	}
	if sel.Namespace != nil && sel.GetNamespace() != u.GetNamespace() {
		return false
	}
	if sel.GetMatchName() != "" {
		return sel.GetMatchName() == u.GetName()
	}
	labels := u.GetLabels()
	for k, v := range sel.GetMatchLabels().GetLabels() {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestFastPathAnswersAsProtobuf sends every golden request to the
// function's server, which reads it with requestCodec and leases its
// buffers, and to a server with gRPC's protobuf codec alone, as
// function.Serve builds it: the answers are the same, and read through
// function-sdk-go's own request helpers, compose the same resources.
func TestFastPathAnswersAsProtobuf(t *testing.T) {
	f := &Function{log: logging.NewNopLogger(), sources: fixedSources}
	fast := fnv1.NewFunctionRunnerServiceClient(serveGRPC(t, f, &codec.Leases{}))
	plain := fnv1.NewFunctionRunnerServiceClient(servePlain(t, f))
	golden := goldenRequests(t)
	if want := len(codectest.Requests(t, builtRequest(t))) + 24*goldenPasses; len(golden) != want {
		t.Fatalf("%d golden requests, want %d", len(golden), want)
	}
	for _, name := range slices.Sorted(maps.Keys(golden)) {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{}
			if err := proto.Unmarshal(golden[name], req); err != nil {
				t.Fatal(err)
			}
			want, err := plain.RunFunction(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range want.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL && !strings.HasPrefix(name, "Empty") {
					t.Fatalf("the pass failed: %s", r.GetMessage())
				}
			}
			got, err := fast.RunFunction(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("RunFunction(): -protobuf's codec, +the function's server:\n%s", diff)
			}
			wantComposed, err := request.GetDesiredComposedResources(&fnv1.RunFunctionRequest{Desired: want.GetDesired()})
			if err != nil {
				t.Fatal(err)
			}
			gotComposed, err := request.GetDesiredComposedResources(&fnv1.RunFunctionRequest{Desired: got.GetDesired()})
			if err != nil {
				t.Fatalf("function-sdk-go cannot read the function server's answer: %v", err)
			}
			if diff := cmp.Diff(wantComposed, gotComposed); diff != "" {
				t.Errorf("composed resources as function-sdk-go reads them: -protobuf's codec, +the function's server:\n%s", diff)
			}
		})
	}
}

// servePlain serves f on loopback with gRPC's own codec, as function.Serve
// does, and returns a client of it.
func servePlain(t testing.TB, f *Function) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer()
	fnv1.RegisterFunctionRunnerServiceServer(srv, f)
	return codectest.Serve(t, srv)
}

// FuzzAnswersAlike holds the function's fast path to protobuf on any bytes:
// read by requestCodec and answered with a lease, and read by
// proto.Unmarshal and answered without, a request is refused by both or
// gets the same answer.
func FuzzAnswersAlike(f *testing.F) {
	for _, b := range goldenRequests(f) {
		f.Add(b)
	}
	fn := &Function{log: logging.NewNopLogger(), sources: fixedSources}
	fast := newFastPath(fn)
	f.Fuzz(func(t *testing.T, b []byte) {
		plain := &fnv1.RunFunctionRequest{}
		plainErr := proto.Unmarshal(b, plain)
		out, fastErr := fast.serve(bytes.Clone(b))
		switch {
		case plainErr != nil && fastErr == nil:
			t.Fatalf("the fast path reads what proto.Unmarshal refuses (%v)", plainErr)
		case plainErr == nil && fastErr != nil:
			t.Fatalf("the fast path refuses what proto.Unmarshal reads: %v", fastErr)
		case plainErr != nil:
			return
		}
		want, err := fn.RunFunction(context.Background(), plain)
		if err != nil {
			t.Fatal(err)
		}
		got := &fnv1.RunFunctionResponse{}
		if err := proto.Unmarshal(out.Materialize(), got); err != nil {
			t.Fatal(err)
		}
		out.Free()
		if diff := cmp.Diff(codectest.OnWire(t, want), got, protocmp.Transform()); diff != "" {
			t.Errorf("-proto.Unmarshal and RunFunction, +the fast path:\n%s", diff)
		}
	})
}
