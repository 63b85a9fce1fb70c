package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	platform "github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/golden"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/internal/monitoring"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

var update = flag.Bool("update", false, "write the golden files of TestCrossplaneRender")

var controlPlane local.Shared

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(controlPlane.Run(m))
}

// repo is the module root, where make puts the Crossplane CLI.
const repo = ".."

// functionsYAML points crossplane render at the function the test runs.
const functionsYAML = `apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: knative-lambda-function-knative-lambda
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: %s
spec:
  package: xpkg.crossplane.io/knative-lambda/function-knative-lambda:v0.1.0
`

// TestCrossplaneRender runs the real Crossplane CLI's render over every
// platform example, in both modes, against the function built and started
// as its own process, and compares the output with golden files. Then the
// real API server validates each rendered composed resource (strict, dry
// run) against its real schema: Knative's, batch's and our managed
// resources'; and crossplane beta validate, offline, validates the whole XR
// with its status against the platform's XRD.
func TestCrossplaneRender(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	crossplane, err := filepath.Abs(filepath.Join(repo, ".cache", "bin", "crossplane"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(crossplane); err != nil {
		t.Fatalf("the Crossplane CLI is not built: run make test, which builds it (%v)", err)
	}
	dir := t.TempDir()
	fn := startFunction(ctx, t, dir)
	functions := filepath.Join(dir, "functions.yaml")
	if err := os.WriteFile(functions, fmt.Appendf(nil, functionsYAML, fn.address), 0o600); err != nil {
		t.Fatal(err)
	}
	required := filepath.Join(dir, "required.yaml")
	if err := os.WriteFile(required, concat(t,
		filepath.Join(repo, "examples", "clusterproviderconfig.yaml"),
		filepath.Join(repo, "examples", "platform", "xrs", "namespace.yaml"),
		filepath.Join(repo, "examples", "platform", "claims", "namespace.yaml"),
		filepath.Join("testdata", "render", "required.yaml")), 0o600); err != nil {
		t.Fatal(err)
	}
	kube := testkit.Client(t, controlPlane.Config(t))
	validateArgs := cliValidateArgs(ctx, t, dir)

	examples, err := filepath.Glob(filepath.Join(repo, "examples", "platform", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rendered := 0
	for _, ex := range examples {
		xr, ok := compositeOfExample(t, ex)
		if !ok {
			continue
		}
		xrFile := filepath.Join(dir, filepath.Base(filepath.Dir(ex))+"-"+filepath.Base(ex))
		if err := os.WriteFile(xrFile, xr, 0o600); err != nil {
			t.Fatal(err)
		}
		kind := kindOf(t, xr)
		for _, mode := range []string{"direct", "managed"} {
			name := filepath.Base(filepath.Dir(ex)) + "-" + strings.TrimSuffix(filepath.Base(ex), ".yaml") + "-" + mode
			t.Run(name, func(t *testing.T) {
				comp := filepath.Join(repo, "package", "configuration", "composition-"+strings.ToLower(kind)+"s-"+mode+".yaml")
				cmd := exec.CommandContext(ctx, crossplane, "render", xrFile, comp, functions, "--required-resources="+required)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("crossplane render: %v\n%s", err, stderr.String())
				}
				golden.Check(t, filepath.Join("testdata", "render", name+".yaml"), withoutNetworkErrors(t, out), *update)
				validate(ctx, t, kube, out)

				// The whole XR, status included, against the XRD, as
				// Crossplane turns it into a CRD, and the composed
				// resources against the CRDs the CLI is given.
				full := exec.CommandContext(ctx, crossplane, "render", xrFile, comp, functions, "--required-resources="+required, "--include-full-xr")
				rendered, err := full.Output()
				if err != nil {
					t.Fatalf("crossplane render --include-full-xr: %v", err)
				}
				v := exec.CommandContext(ctx, crossplane, append(validateArgs, "-")...)
				v.Stdin = bytes.NewReader(rendered)
				if out, err := v.CombinedOutput(); err != nil {
					t.Errorf("crossplane beta validate: %v\n%s", err, out)
				}
			})
			rendered++
		}
	}
	// Six workloads, each as an XR and as a claim, in two modes.
	if rendered != 24 {
		t.Errorf("rendered %d examples in their modes, want 24", rendered)
	}
	exportsKitNames(ctx, t, "http://"+fn.metrics+"/metrics")
}

// exportsKitNames scrapes the function's metrics endpoint after its passes
// and checks that every function metric the monitoring kit's alerts and
// dashboard use is there: renaming one on either side fails here.
func exportsKitNames(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	missing, err := monitoring.Unexported(ctx, filepath.Join(repo, monitoring.Dir), monitoring.Function, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("the monitoring kit uses function metrics the function does not export:\n%s", strings.Join(missing, "\n"))
	}
}

// cliValidateArgs are the arguments of crossplane beta validate, offline:
// the platform's XRDs, the provider's CRDs and Knative's, and Crossplane's
// own CRDs put where the CLI would otherwise download its package to.
func cliValidateArgs(ctx context.Context, t *testing.T, dir string) []string {
	t.Helper()
	// The XRDs rather than the configuration's folder: its meta file's
	// dependencies would send the CLI to a registry.
	extensions, err := filepath.Glob(filepath.Join(repo, "package", "configuration", "definition-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	extensions = append(extensions, filepath.Join(repo, "package", "crds"))
	var core []byte
	for _, s := range local.ThirdPartyCRDs {
		d, err := s.Path(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		if s.Module != "github.com/crossplane/crossplane/v2" {
			extensions = append(extensions, d)
			continue
		}
		files, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		core = concat(t, files...)
	}
	cache := filepath.Join(dir, "xpkg-cache")
	pkg := filepath.Join(cache, "xpkg.crossplane.io", "crossplane", "crossplane@"+local.CrossplaneVersion)
	if err := os.MkdirAll(pkg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.yaml"), core, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"beta", "validate", strings.Join(extensions, ","),
		"--cache-dir=" + cache, "--crossplane-image=xpkg.crossplane.io/crossplane/crossplane:" + local.CrossplaneVersion}
}

// A functionProcess is the function running as its own process.
type functionProcess struct {
	// address serves its gRPC API, metrics its Prometheus metrics.
	address, metrics string
}

// startFunction builds the function and runs it as crossplane render's
// Development runtime expects: plain gRPC on a loopback address, with its
// metrics on another.
func startFunction(ctx context.Context, t *testing.T, dir string) functionProcess {
	t.Helper()
	bin := filepath.Join(dir, "function-knative-lambda")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p := functionProcess{address: loopback.Address(t), metrics: loopback.Address(t)}
	cmd := exec.CommandContext(ctx, bin, "--insecure", "--address="+p.address, "--metrics-address="+p.metrics)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.address)
		if err == nil {
			_ = c.Close()
			return p
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the function does not listen on %s: %v", p.address, err)
		}
	}
}

// compositeOfExample is the composite resource of an example: an XR as it
// is, a claim as the XR Crossplane makes of it (cluster scoped, named after
// the claim with a suffix, labelled with the claim's name and namespace and
// bound to it by spec.claimRef).
// Other manifests, such as namespaces, have none.
func compositeOfExample(t testing.TB, path string) ([]byte, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	switch u.GetKind() {
	case platform.LambdaKind, platform.AgentKind:
		return b, true
	case platform.LambdaClaimKind, platform.AgentClaimKind:
		spec, _ := u.Object["spec"].(map[string]any)
		xr := &unstructured.Unstructured{Object: map[string]any{"spec": withClaimRef(spec, "X"+strings.TrimSuffix(u.GetKind(), "Claim"), u.GetNamespace(), u.GetName())}}
		xr.SetAPIVersion(u.GetAPIVersion())
		xr.SetKind("X" + strings.TrimSuffix(u.GetKind(), "Claim"))
		xr.SetName(u.GetName() + "-x7k2p")
		xr.SetLabels(map[string]string{"crossplane.io/claim-name": u.GetName(), "crossplane.io/claim-namespace": u.GetNamespace()})
		out, err := yaml.Marshal(xr.Object)
		if err != nil {
			t.Fatal(err)
		}
		return out, true
	}
	return nil, false
}

func kindOf(t testing.TB, b []byte) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u.GetKind()
}

func concat(t *testing.T, paths ...string) []byte {
	t.Helper()
	var out []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, "---\n"...), b...)
	}
	return out
}

// withoutNetworkErrors cuts, from the XR's conditions, what the network
// said when a git or S3 source could not be reached: the examples' servers
// do not exist here, and how a lookup fails differs between machines. What
// the function was reading stays.
func withoutNetworkErrors(t *testing.T, out []byte) []byte {
	t.Helper()
	docs := strings.SplitN(strings.TrimPrefix(string(out), "---\n"), "\n---\n", 2)
	xr := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(docs[0]), &xr.Object); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(xr.Object, "status", "conditions")
	changed := false
	for _, c := range conds {
		m := c.(map[string]any) //nolint:forcetypeassert // Conditions are objects.
		msg, _ := m["message"].(string)
		if m["reason"] != string(v1alpha1.ReasonSourceUnreachable) || !strings.Contains(msg, ": ") {
			continue
		}
		m["message"] = strings.SplitN(msg, ": ", 2)[0] + ": (the network's answer, which differs between machines)"
		changed = true
	}
	if !changed {
		return out
	}
	if err := unstructured.SetNestedSlice(xr.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(xr.Object)
	if err != nil {
		t.Fatal(err)
	}
	b = append([]byte("---\n"), b...)
	if len(docs) == 2 {
		b = append(b, "---\n"+docs[1]...)
	}
	return b
}

// validate creates each composed resource of a render on the real API
// server as a strict dry run. Render sets owner references without a UID,
// which only Crossplane fills in; they are left out.
func validate(ctx context.Context, t *testing.T, kube client.Client, out []byte) {
	t.Helper()
	docs := strings.Split(string(out), "\n---\n")
	for _, d := range docs[1:] { // The first is the XR.
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetOwnerReferences(nil)
		if ns := u.GetNamespace(); ns != "" {
			testkit.Namespace(ctx, t, kube, ns, "")
		}
		if err := kube.Create(ctx, u, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}); err != nil {
			t.Errorf("the API server refuses rendered %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

// TestConfigurationPackage creates every XRD and Composition of the
// configuration package on the real API server, with Crossplane's own CRDs
// and their CEL rules, as a strict dry run; and each Composition's Input
// under the function's Input CRD.
func TestConfigurationPackage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, err := manifest.Read(filepath.Join(repo, "package", "configuration"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	kube := testkit.Client(t, controlPlane.Config(t))
	for _, o := range objs {
		kinds[o.GetAPIVersion()+"/"+o.GetKind()]++
		if o.GroupVersionKind().Group == "meta.pkg.crossplane.io" {
			// The package's meta file; crossplane xpkg build reads it.
			continue
		}
		if err := kube.Create(ctx, o, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}); err != nil {
			t.Errorf("the API server refuses %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	inputs, err := local.LoadCRDs(filepath.Join(repo, "package", "function", "input"))
	if err != nil {
		t.Fatal(err)
	}
	if err := local.InstallCRDs(controlPlane.Config(t), inputs); err != nil {
		t.Fatal(err)
	}
	testkit.Namespace(ctx, t, kube, "inputs", "")
	for _, o := range objs {
		steps, _, _ := unstructured.NestedSlice(o.Object, "spec", "pipeline")
		for _, st := range steps {
			in, ok := st.(map[string]any)["input"].(map[string]any)
			if !ok {
				continue
			}
			u := &unstructured.Unstructured{Object: in}
			u.SetNamespace("inputs")
			u.SetName(o.GetName())
			if err := kube.Create(ctx, u, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}); err != nil {
				t.Errorf("the API server refuses the Input of Composition %s: %v", o.GetName(), err)
			}
			kinds["Input"]++
		}
	}
	want := map[string]int{
		"Input": 8,
		"meta.pkg.crossplane.io/v1/Configuration":                    1,
		"apiextensions.crossplane.io/v2/CompositeResourceDefinition": 2,
		"apiextensions.crossplane.io/v1/CompositeResourceDefinition": 2,
		"apiextensions.crossplane.io/v1/Composition":                 8,
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("package/configuration: -want, +got:\n%s", diff)
	}
}
