package cli_test

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/internal/cli"
)

// noCluster is a kubeconfig that names no cluster: the local loop must not
// need one.
func noCluster(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	return path
}

// offline runs the plugin with no cluster and returns what it wrote to
// standard output and error, and its error.
func offline(ctx context.Context, out, errOut *process.Output, args ...string) error {
	cmd := cli.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, time.Now)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

// localOK runs the plugin with no cluster, fails the test on its error,
// and returns what it wrote to standard output.
func localOK(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut process.Output
	if err := offline(ctx, &out, &errOut, args...); err != nil {
		t.Fatalf("kubectl lambda %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// A started run is kubectl lambda run serving until stopped.
type started struct {
	url         string
	out, errOut *process.Output
	stop        func() error
}

var runsAt = regexp.MustCompile(`runs at (http://127\.0\.0\.1:[0-9]+)`)

// startRun runs kubectl lambda run with args until the test stops it, and
// waits until it says where the function serves.
func startRun(ctx context.Context, t *testing.T, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	s := &started{out: &process.Output{}, errOut: &process.Output{}}
	done := make(chan error, 1)
	go func() { done <- offline(ctx, s.out, s.errOut, append([]string{"run", "--port", "0"}, args...)...) }()
	s.stop = func() error {
		cancel()
		return <-done
	}
	deadline := time.After(4 * time.Minute)
	for s.url == "" {
		select {
		case err := <-done:
			t.Fatalf("kubectl lambda run ended before it served: %v\n%s%s", err, s.out.String(), s.errOut.String())
		case <-deadline:
			cancel()
			t.Fatalf("kubectl lambda run did not serve in 4 minutes:\n%s%s", s.out.String(), s.errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
		if m := runsAt.FindStringSubmatch(s.out.String()); m != nil {
			s.url = m[1]
		}
	}
	return s
}

// gone says whether nothing answers at url any longer.
func gone(url string) bool {
	r, err := http.Get(url + "/health") //nolint:noctx // One probe.
	if err == nil {
		_ = r.Body.Close()
	}
	return err != nil
}

// squeezed is s without white space, as JSON of any indentation compares.
func squeezed(s string) string { return strings.Join(strings.Fields(s), "") }

// TestLocalLoop is a function author's first hour, with no cluster, in each
// language: init writes a function; the language's own test tool passes its
// test; run serves it on this machine with the wrapper its image would
// have; invoke reaches it with plain HTTP and with a CloudEvent; a changed
// handler file is what run serves next; and stopping run stops the
// function's process.
func TestLocalLoop(t *testing.T) {
	noCluster(t)
	cases := map[string]struct {
		language, tool string
		test           []string
		codeFile       string
		// change makes the handler greet in French.
		change func(string) string
	}{
		"Python": {language: "python", tool: "python3", test: []string{"python3", "-m", "unittest", "-v"}, codeFile: "main.py",
			change: func(s string) string {
				return strings.Replace(s, `{"hello": who or "world"}`, `{"bonjour": who or "world"}`, 1)
			}},
		"NodeJS": {language: "nodejs", tool: "node", test: []string{"node", "--test"}, codeFile: "index.js",
			change: func(s string) string {
				return strings.Replace(s, "{ hello: who || 'world' }", "{ bonjour: who || 'world' }", 1)
			}},
		"Go": {language: "go", tool: "go", test: []string{"go", "test", "./..."}, codeFile: "handler.go",
			change: func(s string) string { return strings.Replace(s, `{"hello": who}`, `{"bonjour": who}`, 1) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				t.Skipf("%s is not installed on this machine (CI installs it)", tc.tool)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "greeter")
			said := localOK(ctx, t, "init", "greeter", "--language", tc.language, "--dir", dir)
			if !strings.Contains(said, strings.Join(tc.test[:len(tc.test)-1], " ")) && !strings.Contains(said, strings.Join(tc.test, " ")) {
				t.Errorf("init does not say how to run the test (%s):\n%s", strings.Join(tc.test, " "), said)
			}
			for _, f := range []string{tc.codeFile, cli.ManifestFunction, cli.ManifestLambda} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Fatalf("init wrote no %s: %v", f, err)
				}
			}

			test := exec.CommandContext(ctx, tc.test[0], tc.test[1:]...)
			test.Dir = dir
			if out, err := test.CombinedOutput(); err != nil {
				t.Fatalf("the starter's own test fails (%s): %v\n%s", strings.Join(tc.test, " "), err, out)
			}

			run := startRun(ctx, t, filepath.Join(dir, cli.ManifestFunction))
			plain := localOK(ctx, t, "invoke", "--url", run.url, "--http", "--path", "/?name=ada")
			if !strings.Contains(plain, "200 OK") || !strings.Contains(squeezed(plain), `{"hello":"ada"}`) {
				t.Errorf("a plain request got:\n%s\nwant 200 with {\"hello\": \"ada\"}", plain)
			}
			event := localOK(ctx, t, "invoke", "--url", run.url, "--type", "com.example.greet", "--data", `{"name": "bob"}`)
			if !strings.Contains(event, `"type": "com.example.greet.response"`) || !strings.Contains(squeezed(event), `"data":{"hello":"bob"}`) {
				t.Errorf("a CloudEvent got:\n%s\nwant the reply event with {\"hello\": \"bob\"}", event)
			}
			if err := run.stop(); err != nil {
				t.Errorf("kubectl lambda run ended with %v\n%s", err, run.errOut.String())
			}
			if !gone(run.url) {
				t.Errorf("the function still answers at %s after run stopped", run.url)
			}

			code := filepath.Join(dir, tc.codeFile)
			b, err := os.ReadFile(code)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(code, []byte(tc.change(string(b))), 0o600); err != nil {
				t.Fatal(err)
			}
			run = startRun(ctx, t, filepath.Join(dir, cli.ManifestFunction))
			defer run.stop() //nolint:errcheck // Checked above; here only stopped.
			if !strings.Contains(run.errOut.String(), "kubectl apply deploys the manifest's") {
				t.Errorf("run does not warn that the manifest's inline code differs from %s:\n%s", tc.codeFile, run.errOut.String())
			}
			if got := localOK(ctx, t, "invoke", "--url", run.url, "--http", "--path", "/?name=ada"); !strings.Contains(squeezed(got), `{"bonjour":"ada"}`) {
				t.Errorf("after the handler changed, a plain request got:\n%s\nwant {\"bonjour\": \"ada\"}", got)
			}
		})
	}
}

// TestRunLambdaInline runs the platform API's Lambda that init writes, with
// its inline code, as a team would before committing it; the folder a
// killed run left is removed when the next one starts.
func TestRunLambdaInline(t *testing.T) {
	noCluster(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed on this machine (CI installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	killed := exec.CommandContext(ctx, "true")
	if err := killed.Run(); err != nil {
		t.Fatal(err)
	}
	left, err := os.MkdirTemp("", "kubectl-lambda-run-")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(left, "run.pid"), strconv.Itoa(killed.Process.Pid))
	dir := filepath.Join(t.TempDir(), "greeter")
	localOK(ctx, t, "init", "greeter", "--language", "python", "--dir", dir)
	// Only the manifest is left: its inline code is what runs.
	if err := os.Remove(filepath.Join(dir, "main.py")); err != nil {
		t.Fatal(err)
	}
	run := startRun(ctx, t, filepath.Join(dir, cli.ManifestLambda))
	defer run.stop() //nolint:errcheck // Only stopped.
	if got := localOK(ctx, t, "invoke", "--url", run.url, "--http", "--path", "/?name=ada"); !strings.Contains(squeezed(got), `{"hello":"ada"}`) {
		t.Errorf("a plain request got:\n%s\nwant {\"hello\": \"ada\"}", got)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(left)
		t.Errorf("the folder of a killed run is left: %v", err)
	}
}

// envHandler answers with the variables its function was given.
const envHandler = `import os

def handler(event, context):
    names = ["MODE", "DB_PASSWORD", "APP_REGION", "APP_LEVEL", "MAYBE", "LAMBDA_HANDLER"]
    return {n: os.environ.get(n) for n in names}
`

// TestRunEnvironment runs a function whose env and envFrom read a Secret
// and a ConfigMap given in a --values file, as the kubelet would give them
// to its container in the cluster, and refuses to start one whose Secret is
// not given, saying which and what reads it.
func TestRunEnvironment(t *testing.T) {
	noCluster(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed on this machine (CI installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "env.yaml")
	write(t, manifest, `apiVersion: lambda.m.crossplane.io/v1alpha1
kind: LambdaFunction
metadata:
  name: env
spec:
  forProvider:
    source:
      inline:
        code: |
`+indented(10, envHandler)+`
    runtime:
      language: python
    env:
      - name: MODE
        value: strict
      - name: DB_PASSWORD
        valueFrom: {secretKeyRef: {name: db, key: password}}
      - name: APP_LEVEL
        value: from-env
      - name: MAYBE
        valueFrom: {secretKeyRef: {name: absent, key: k, optional: true}}
    envFrom:
      - configMapRef: {name: settings}
        prefix: APP_
    volumes:
      - path: /var/run/secrets/db
        secret: {name: db}
`)
	values := filepath.Join(dir, "values.yaml")
	write(t, values, `apiVersion: v1
kind: Secret
metadata: {name: db}
data: {password: czNjcjN0}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {REGION: eu-west-1, LEVEL: from-configmap, HANDLER: not-the-wrappers}
`)

	var out, errOut process.Output
	err := offline(ctx, &out, &errOut, "run", manifest, "--port", "0")
	want := `Secret db (environment variable DB_PASSWORD) is missing`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--values") {
		t.Errorf("run without the Secret: error %v, want one that says %q and how to give it", err, want)
	}

	run := startRun(ctx, t, manifest, "--values", values)
	defer run.stop() //nolint:errcheck // Only stopped.
	if !strings.Contains(run.errOut.String(), "The volume at /var/run/secrets/db is not mounted") {
		t.Errorf("run does not say the volume is not mounted:\n%s", run.errOut.String())
	}
	got := localOK(ctx, t, "invoke", "--url", run.url, "--http")
	wantBody := `{"MODE":"strict","DB_PASSWORD":"s3cr3t","APP_REGION":"eu-west-1","APP_LEVEL":"from-env","MAYBE":null,"LAMBDA_HANDLER":"main.handler"}`
	if !strings.Contains(squeezed(got), wantBody) {
		t.Errorf("the function's environment:\n%s\nwant %s", got, wantBody)
	}
}

// TestRunRefusesWhatCannotRun names what run cannot start, before it starts
// anything.
func TestRunRefusesWhatCannotRun(t *testing.T) {
	noCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	cases := map[string]struct {
		manifest, want string
	}{
		"Image": {
			manifest: "apiVersion: lambda.m.crossplane.io/v1alpha1\nkind: LambdaFunction\nmetadata: {name: img}\nspec:\n  forProvider:\n    source: {image: {repository: ghcr.io/acme/hello, tag: v1}}\n",
			want:     "prebuilt image",
		},
		"Git without a folder": {
			manifest: "apiVersion: lambda.m.crossplane.io/v1alpha1\nkind: LambdaFunction\nmetadata: {name: git}\nspec:\n  forProvider:\n    source: {git: {url: https://git.example.com/fns.git, ref: main}}\n    runtime: {language: python}\n",
			want:     "--dir",
		},
		"Unknown field": {
			manifest: "apiVersion: lambda.m.crossplane.io/v1alpha1\nkind: LambdaFunction\nmetadata: {name: typo}\nspec:\n  forProvider:\n    source: {inline: {code: x}}\n    runtime: {language: python}\n    enviroment: []\n",
			want:     `unknown field "enviroment"`,
		},
		"Another kind": {
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			want:     "run takes a LambdaFunction",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			write(t, file, tc.manifest)
			var out, errOut process.Output
			err := offline(ctx, &out, &errOut, "run", file, "--port", "0")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run %s: error %v, want one that says %q", name, err, tc.want)
			}
		})
	}
}

// TestInvokeNeedsNameOrURL checks that invoke without a cluster says what
// it needs.
func TestInvokeNeedsNameOrURL(t *testing.T) {
	noCluster(t)
	var out, errOut process.Output
	err := offline(context.Background(), &out, &errOut, "invoke")
	if err == nil || !strings.Contains(err.Error(), "give --url") {
		t.Errorf("invoke with neither: error %v, want one that asks for a name or --url", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Error("invoke was cancelled")
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// indented puts n spaces before each line of s that is not empty.
func indented(n int, s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.Repeat(" ", n) + l
		}
	}
	return strings.Join(lines, "\n")
}

// TestInitRefusesUnsupportedVersions checks that init refuses a version the
// API server would refuse, before it writes anything, and writes one it
// admits into the manifest.
func TestInitRefusesUnsupportedVersions(t *testing.T) {
	noCluster(t)
	ctx := context.Background()
	cases := map[string]struct {
		reason, language, version string
		refused                   bool
	}{
		"OldPython":   {reason: "Python 3.10 is below the supported versions.", language: "python", version: "3.10", refused: true},
		"OddNodeJS":   {reason: "Node.js 21 is no supported line.", language: "nodejs", version: "21", refused: true},
		"PrefixedGo":  {reason: "A Go version is written without its v.", language: "go", version: "v1.25", refused: true},
		"NewerPython": {reason: "Python 3.12 is supported.", language: "python", version: "3.12"},
		"NewerGo":     {reason: "Go 1.26 is supported.", language: "go", version: "1.26"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fn")
			var out, errOut process.Output
			err := offline(ctx, &out, &errOut, "init", "greeter", "--language", tc.language, "--version", tc.version, "--dir", dir)
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), v1alpha1.SupportedVersions) {
					t.Fatalf("%s\ninit --version %s: error %v, want one that names the supported versions", tc.reason, tc.version, err)
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("%s\ninit --version %s wrote %s: %v", tc.reason, tc.version, dir, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\ninit --version %s: %v", tc.reason, tc.version, err)
			}
			b, err := os.ReadFile(filepath.Join(dir, cli.ManifestFunction))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("version: %q", tc.version); !strings.Contains(string(b), want) {
				t.Errorf("%s\nthe manifest lacks %s:\n%s", tc.reason, want, b)
			}
		})
	}
}

// TestRunInstallsDependencies runs inline functions whose dependency file
// names a package, as the image's build installs it, and refuses to run an
// author's own folder whose dependencies are not installed, saying what to
// run: run does not write into it. The packages are local, a wheel and a
// folder, so the test needs no package index.
func TestRunInstallsDependencies(t *testing.T) {
	noCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	wheel := pythonWheel(t, dir, "greet", "def name():\n    return \"a package\"\n")
	nodePackage := filepath.Join(dir, "greet-js")
	if err := os.Mkdir(nodePackage, 0o750); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(nodePackage, "package.json"), `{"name": "greet", "version": "1.0.0", "main": "index.js"}`)
	write(t, filepath.Join(nodePackage, "index.js"), "exports.name = () => 'a package';\n")

	cases := map[string]struct {
		tool, language, code, dependencies string
	}{
		"python": {
			tool: "python3", language: "python",
			code:         "import greet\n\ndef handler(event, context):\n    return {\"hello\": greet.name()}\n",
			dependencies: wheel + "\n",
		},
		"nodejs": {
			tool: "npm", language: "nodejs",
			code:         "const greet = require('greet');\nexports.handler = async () => ({ hello: greet.name() });\n",
			dependencies: `{"name": "fn", "version": "1.0.0", "dependencies": {"greet": "file:` + nodePackage + `"}}` + "\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				t.Skipf("%s is not installed on this machine (CI installs it)", tc.tool)
			}
			manifest := filepath.Join(t.TempDir(), "fn.yaml")
			write(t, manifest, `apiVersion: lambda.m.crossplane.io/v1alpha1
kind: LambdaFunction
metadata:
  name: deps
spec:
  forProvider:
    source:
      inline:
        code: |
`+indented(10, tc.code)+`
        dependencies: |
`+indented(10, tc.dependencies)+`
    runtime:
      language: `+tc.language+"\n")
			run := startRun(ctx, t, manifest)
			defer run.stop() //nolint:errcheck // Only stopped.
			if got := localOK(ctx, t, "invoke", "--url", run.url, "--http"); !strings.Contains(squeezed(got), `{"hello":"apackage"}`) {
				t.Errorf("the function's answer:\n%s\nwant {\"hello\": \"a package\"}", got)
			}
		})
	}

	t.Run("own-folder", func(t *testing.T) {
		own := t.TempDir()
		write(t, filepath.Join(own, "main.py"), cases["python"].code)
		write(t, filepath.Join(own, "requirements.txt"), cases["python"].dependencies)
		manifest := filepath.Join(own, "fn.yaml")
		write(t, manifest, "apiVersion: lambda.m.crossplane.io/v1alpha1\nkind: LambdaFunction\nmetadata:\n  name: deps\nspec:\n  forProvider:\n    source: {inline: {code: unused}}\n    runtime: {language: python}\n")
		var out, errOut process.Output
		err := offline(ctx, &out, &errOut, "run", manifest, "--port", "0")
		if err == nil || !strings.Contains(err.Error(), "are not installed") || !strings.Contains(err.Error(), "pip install") {
			t.Errorf("run of a folder whose dependencies are not installed: error %v, want one that says what to run", err)
		}
		if _, err := os.Stat(filepath.Join(own, ".deps")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("run wrote into the author's folder: %v", err)
		}
	})
}

// pythonWheel writes a wheel of one pure-Python package, pkg, whose
// __init__.py is init, into dir and returns its path.
func pythonWheel(t *testing.T, dir, pkg, init string) string {
	t.Helper()
	path := filepath.Join(dir, pkg+"-1.0-py3-none-any.whl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	info := pkg + "-1.0.dist-info/"
	files := [][2]string{
		{pkg + "/__init__.py", init},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + pkg + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: provider-knative-lambda-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "RECORD", pkg + "/__init__.py,,\n" + info + "METADATA,,\n" + info + "WHEEL,,\n" + info + "RECORD,,\n"},
	}
	for _, file := range files {
		w, err := z.Create(file[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, file[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunEndsWhenTheFunctionCannotStart runs a function whose handler
// cannot be imported: run ends at once with the function's exit, and what
// the function wrote says why. It waited for ever before, since the step
// that saw the function end kept its exit from the one that stops it.
func TestRunEndsWhenTheFunctionCannotStart(t *testing.T) {
	noCluster(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed on this machine (CI installs it)")
	}
	manifest := filepath.Join(t.TempDir(), "fn.yaml")
	write(t, manifest, "apiVersion: lambda.m.crossplane.io/v1alpha1\nkind: LambdaFunction\nmetadata:\n  name: broken\nspec:\n  forProvider:\n    source: {inline: {code: \"import not_installed\\n\"}}\n    runtime: {language: python}\n")
	var out, errOut process.Output
	done := make(chan error, 1)
	go func() { done <- offline(context.Background(), &out, &errOut, "run", manifest, "--port", "0") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
			t.Errorf("run of a function that cannot start: error %v, want one that says it exited", err)
		}
		if !strings.Contains(errOut.String(), "not_installed") {
			t.Errorf("the function's own output does not say why it exited:\n%s", errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run of a function that cannot start did not end in 30 seconds")
	}
}
