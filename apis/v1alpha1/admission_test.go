package v1alpha1_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/internal/diff"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

var controlPlane local.Shared

func TestMain(m *testing.M) {
	os.Exit(controlPlane.Run(m))
}

// strict asks the API server to refuse unknown fields, as kubectl does.
var strict = &client.CreateOptions{FieldValidation: metav1.FieldValidationStrict}

// typedFor is the Go type the provider decodes a kind into.
func typedFor(kind string) client.Object {
	switch kind {
	case v1alpha1.LambdaFunctionKind:
		return &v1alpha1.LambdaFunction{}
	case v1alpha1.LambdaAgentKind:
		return &v1alpha1.LambdaAgent{}
	case v1alpha1.ProviderConfigKind:
		return &v1alpha1.ProviderConfig{}
	case v1alpha1.ClusterProviderConfigKind:
		return &v1alpha1.ClusterProviderConfig{}
	}
	return nil
}

// TestValidManifestsAreAdmitted creates every example and every valid test
// manifest, reads each back into the provider's Go type, and checks that
// nothing written was lost or changed on the way: no field pruned by the
// schema, dropped by the Go types, or overwritten by a default.
func TestValidManifestsAreAdmitted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := testkit.Client(t, controlPlane.Config(t))
	ns := testkit.Namespace(ctx, t, c, "admission-", "")

	var objs []*unstructured.Unstructured
	for _, dir := range []string{"testdata/valid", "../../examples"} {
		o, err := manifest.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	// Namespaces first: the examples live in one.
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetKind() == "Namespace" && objs[j].GetKind() != "Namespace" })
	createAssumedNamespaces(ctx, t, c, objs)

	for _, u := range objs {
		name := u.GetKind() + "/" + u.GetName()
		t.Run(name, func(t *testing.T) {
			want := u.DeepCopy()
			if typedFor(u.GetKind()) != nil && u.GetKind() != v1alpha1.ClusterProviderConfigKind && u.GetNamespace() == "" {
				u.SetNamespace(ns)
			}
			if err := c.Create(ctx, u, strict); err != nil {
				t.Fatalf("Create(%s): %v", name, err)
			}
			typed := typedFor(u.GetKind())
			if typed == nil {
				return
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), typed); err != nil {
				t.Fatalf("Get(%s): %v", name, err)
			}
			got, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
			if err != nil {
				t.Fatal(err)
			}
			if missing := diff.Missing(want.Object["spec"], got["spec"]); len(missing) > 0 {
				t.Errorf("%s read back lost or changed what was written:\n%s", name, strings.Join(missing, "\n"))
			}
		})
	}
}

// createAssumedNamespaces creates the namespaces the manifests use but no
// manifest creates, such as crossplane-system, which exists wherever
// Crossplane is installed.
func createAssumedNamespaces(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	created := map[string]bool{}
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			created[u.GetName()] = true
		}
	}
	for _, u := range objs {
		n := u.GetNamespace()
		if n == "" || created[n] {
			continue
		}
		created[n] = true
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
}

// An invalidCase is a manifest the API server must refuse, with the field
// the refusal must name and the words it must say.
type invalidCase struct {
	file  string
	field string
	want  string
	obj   *unstructured.Unstructured
}

// readInvalid reads a manifest of testdata/invalid and its '# field:' and
// '# want:' header lines.
func readInvalid(t *testing.T, file string) invalidCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // Read only.
	tc := invalidCase{file: file}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# field: "); ok {
			tc.field = v
		}
		if v, ok := strings.CutPrefix(line, "# want: "); ok {
			tc.want = v
		}
	}
	if tc.field == "" || tc.want == "" {
		t.Fatalf("%s: needs '# field:' and '# want:' header lines", file)
	}
	objs, err := manifest.Read(file)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: want one manifest, got %d (%v)", file, len(objs), err)
	}
	tc.obj = objs[0]
	return tc
}

// TestInvalidManifestsAreRejected sends every manifest of testdata/invalid
// to the real API server and checks it is refused at admission, by the
// schema or a CEL rule, with a message that names the bad field and says
// what is wrong with it.
func TestInvalidManifestsAreRejected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := testkit.Client(t, controlPlane.Config(t))
	ns := testkit.Namespace(ctx, t, c, "admission-", "")

	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("the invalid corpus has %d manifests; it must keep at least 30", len(files))
	}
	for _, file := range files {
		tc := readInvalid(t, file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			if tc.obj.GetKind() != v1alpha1.ClusterProviderConfigKind {
				tc.obj.SetNamespace(ns)
			}
			err := c.Create(ctx, tc.obj, strict)
			if err == nil {
				_ = c.Delete(ctx, tc.obj)
				t.Fatalf("%s: the API server admitted it; want a refusal naming %s", tc.file, tc.field)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.field) {
				t.Errorf("%s: refusal does not name field %q:\n%s", tc.file, tc.field, msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%s: refusal does not say %q:\n%s", tc.file, tc.want, msg)
			}
		})
	}
}

// TestSupportsAsAdmitted holds Language.Supports to the CRD's validation:
// for each language, versions on both sides of each bound are admitted by
// the API server exactly when Supports says so, and a refusal names
// SupportedVersions.
func TestSupportsAsAdmitted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := testkit.Client(t, controlPlane.Config(t))
	ns := testkit.Namespace(ctx, t, c, "versions-", "")
	versions := []string{"3.10", "3.11", "3.12", "3.13", "3", "18", "20", "21", "22", "24", "1.22", "1.23", "1.25", "1.99", "1.100", "2.0", "v1.25"}
	for _, lang := range []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo} {
		for _, version := range versions {
			t.Run(string(lang)+"-"+version, func(t *testing.T) {
				fn := &v1alpha1.LambdaFunction{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "versions"},
					Spec: v1alpha1.LambdaFunctionSpec{ForProvider: v1alpha1.LambdaFunctionParameters{
						Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "x"}},
						Runtime: &v1alpha1.Runtime{Language: &lang, Version: &version},
					}},
				}
				err := c.Create(ctx, fn, client.DryRunAll)
				if admitted := err == nil; admitted != lang.Supports(version) {
					t.Fatalf("%s %s: the API server admitted it: %t (%v); Supports says %t", lang, version, admitted, err, lang.Supports(version))
				}
				if err != nil && !strings.Contains(err.Error(), v1alpha1.SupportedVersions) {
					t.Errorf("%s %s: the refusal does not name %q: %v", lang, version, v1alpha1.SupportedVersions, err)
				}
			})
		}
	}
}
