package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// A healthCheck is one entry of a Flux Kustomization's healthCheckExprs.
type healthCheck struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress"`
	Failed     string `json:"failed"`
}

// TestHealth classifies recorded states of composite resources and claims
// as Flux would: kstatus for kinds without health check expressions (v2
// XRs), and for claims Flux's generation check and then the healthCheckExprs
// shipped in examples/flux, evaluated with CEL over the object.
func TestHealth(t *testing.T) {
	checks := shippedHealthChecks(t)
	states, err := filepath.Glob(filepath.Join("testdata", "health", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(states) == 0 {
		t.Fatal("no recorded states")
	}
	for _, path := range states {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "# want:"))
			// As JSON, so numbers are integers, as an API server's are.
			j, err := yaml.YAMLToJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				t.Fatal(err)
			}
			var got string
			if hc, ok := checks[u.GetKind()]; ok {
				got = evaluate(t, hc, u)
			} else {
				r, err := kstatus.Compute(u)
				if err != nil {
					t.Fatal(err)
				}
				got = r.Status.String()
			}
			if got != want {
				t.Errorf("%s: got %s, want %s", path, got, want)
			}
		})
	}
}

func shippedHealthChecks(t *testing.T) map[string]healthCheck {
	t.Helper()
	objs, err := manifest.Read(filepath.Join(repo, "examples", "flux", "apps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]healthCheck{}
	for _, o := range objs {
		raw, _, _ := unstructured.NestedSlice(o.Object, "spec", "healthCheckExprs")
		for _, r := range raw {
			b, err := yaml.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			hc := healthCheck{}
			if err := yaml.UnmarshalStrict(b, &hc); err != nil {
				t.Fatal(err)
			}
			out[hc.Kind] = hc
		}
	}
	if len(out) == 0 {
		t.Fatal("examples/flux/apps.yaml ships no healthCheckExprs")
	}
	return out
}

// evaluate classifies an object with one kind's expressions as Flux does:
// a status.observedGeneration other than the object's generation is in
// progress whatever they say; none true is in progress. They must not
// overlap, so the answer does not depend on the order Flux tries them in.
func evaluate(t *testing.T, hc healthCheck, u *unstructured.Unstructured) string {
	t.Helper()
	if observed, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); ok && observed != u.GetGeneration() {
		return "InProgress"
	}
	var opts []cel.EnvOption
	for k := range u.Object {
		opts = append(opts, cel.Variable(k, cel.DynType))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		t.Fatal(err)
	}
	var matched []string
	for status, expr := range map[string]string{"InProgress": hc.InProgress, "Failed": hc.Failed, "Current": hc.Current} {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", expr, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		v, _, err := prg.Eval(u.Object)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if v.Value() == true {
			matched = append(matched, status)
		}
	}
	switch len(matched) {
	case 0:
		return "InProgress"
	case 1:
		return matched[0]
	}
	t.Fatalf("expressions overlap: %v", matched)
	return ""
}
