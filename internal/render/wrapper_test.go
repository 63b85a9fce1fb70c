package render

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// Sample handlers, one per language, with one behaviour: greet data.name,
// fail for "boom", take a second for "slow", return what JSON cannot hold
// for "opaque", nothing for "quiet", and log a debug and a warning line for
// "chatty".
var sampleHandlers = map[v1alpha1.Language]string{
	v1alpha1.LanguagePython: `import logging
import time

def handler(event, context):
    name = event["data"]["name"]
    if name == "chatty":
        logging.getLogger(__name__).debug("detail for %s", name)
        context["logger"].warning("greeting %s", name)
    if name == "boom":
        raise ValueError("boom is not a name")
    if name == "slow":
        time.sleep(1)
    if name == "opaque":
        return {1, 2}
    if name == "quiet":
        return None
    return {"greeting": "hello " + name, "type": event["type"]}
`,
	v1alpha1.LanguageNodeJS: `exports.handler = async (event, context) => {
  const name = event.data.name;
  if (name === 'chatty') {
    context.log.debug('detail for %s', name);
    console.warn('greeting %s', name);
  }
  if (name === 'boom') throw new Error('boom is not a name');
  if (name === 'slow') await new Promise((r) => setTimeout(r, 1000));
  if (name === 'opaque') return { n: 1n };
  if (name === 'quiet') return undefined;
  return { greeting: 'hello ' + name, type: event.type };
};
`,
	v1alpha1.LanguageGo: `package function

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

func Handle(ctx context.Context, event map[string]any) (any, error) {
	name, _ := event["data"].(map[string]any)["name"].(string)
	if name == "chatty" {
		slog.DebugContext(ctx, "detail for "+name)
		slog.WarnContext(ctx, "greeting "+name)
	}
	if name == "boom" {
		return nil, errors.New("boom is not a name")
	}
	if name == "slow" {
		time.Sleep(time.Second)
	}
	if name == "opaque" {
		return make(chan int), nil
	}
	if name == "quiet" {
		return nil, nil
	}
	return map[string]any{"greeting": "hello " + name, "type": event["type"]}, nil
}
`,
}

// interpreter is the program each language's wrapper needs on this machine.
var interpreter = map[v1alpha1.Language]string{
	v1alpha1.LanguagePython: "python3",
	v1alpha1.LanguageNodeJS: "node",
	v1alpha1.LanguageGo:     "go",
}

// buildContext renders an inline function and returns the folder of its
// build context as Kaniko reads it in the Job.
func buildContext(t testing.TB, lang v1alpha1.Language, code, dependencies string) (string, Runtime) {
	t.Helper()
	spec := v1alpha1.LambdaFunctionParameters{
		Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: code, Dependencies: dependencies}},
		Runtime: &v1alpha1.Runtime{Language: ptr.To(lang)},
	}
	out, err := Function(FunctionInput{Namespace: "apps", Name: "greeter", Spec: spec, Defaults: testDefaults})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := ResolveRuntime(spec.Runtime, BuildEnv{})
	if err != nil {
		t.Fatal(err)
	}
	return kanikoContext(t, out), rt
}

// A wrapperProgram is how to run one language's wrapper the way its
// Dockerfile does, with the build context's src/ where the image has its code.
type wrapperProgram struct {
	argv []string
	env  []string
}

// newWrapperProgram renders an inline function of the language's sample
// handler and prepares its wrapper to run on this machine (newProgramOf).
func newWrapperProgram(t testing.TB, lang v1alpha1.Language, dependencies string) wrapperProgram {
	t.Helper()
	return newProgramOf(t, lang, sampleHandlers[lang], dependencies)
}

// newProgramOf renders an inline function of code and prepares its
// wrapper to run on this machine; a Go wrapper is built once here. It skips
// the test when the language's tool is missing.
func newProgramOf(t testing.TB, lang v1alpha1.Language, code, dependencies string) wrapperProgram {
	t.Helper()
	if _, err := exec.LookPath(interpreter[lang]); err != nil {
		t.Skipf("%s is not installed on this machine, so the %s wrapper cannot run here (CI installs it)", interpreter[lang], lang)
	}
	dir, rt := buildContext(t, lang, code, dependencies)
	bin := filepath.Join(t.TempDir(), "function")
	local := rt.Local(dir, filepath.Join(dir, "src"), bin)
	if local.Build != nil {
		build := exec.CommandContext(t.Context(), local.Build[0], local.Build[1:]...)
		build.Env = append(append(os.Environ(), local.BuildEnv...), "GOFLAGS=-mod=mod")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", local.Build, err, out)
		}
	}
	p := wrapperProgram{argv: local.Argv, env: append(append(os.Environ(), "K_SERVICE=greeter"), local.Env...)}
	return p
}

// A runningWrapper is a wrapper process serving on loopback.
type runningWrapper struct {
	base   string
	cmd    *exec.Cmd
	exited chan error
	logs   *process.Output
}

// command is the wrapper's process on port, with env added to its own.
func (p wrapperProgram) command(port int, env ...string) (*exec.Cmd, *process.Output) {
	cmd := exec.Command(p.argv[0], p.argv[1:]...) //nolint:noctx // The test stops it.
	cmd.Env = append(append(append([]string(nil), p.env...), "PORT="+strconv.Itoa(port)), env...)
	logs := &process.Output{}
	cmd.Stdout, cmd.Stderr = logs, logs
	return cmd, logs
}

// start runs the wrapper until the test ends and waits until it is healthy.
func (p wrapperProgram) start(t *testing.T, env ...string) *runningWrapper {
	t.Helper()
	port := loopback.Port(t)
	cmd, logs := p.command(port, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &runningWrapper{base: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, exited: make(chan error, 1), logs: logs}
	go func() { w.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("wrapper output:\n%s", logs.String())
		}
	})
	waitHealthy(t, w.base, w.exited)
	return w
}

// logged waits until the wrapper's log holds every text, as a wrapper may
// write an invocation's line after its caller has the answer, and says
// whether it did within ten seconds.
func (w *runningWrapper) logged(texts ...string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs := w.logs.String()
		if !slices.ContainsFunc(texts, func(text string) bool { return !strings.Contains(logs, text) }) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHealthy polls /health until the wrapper answers.
func waitHealthy(t *testing.T, base string, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("the wrapper exited before it was healthy: %v", err)
		default:
		}
		if r, err := http.Get(base + PathHealth); err == nil { //nolint:noctx // A test poll.
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the wrapper was not healthy within 30s")
}

// TestWrappers runs each language's wrapper for real against a sample
// handler and talks to it with the CloudEvents Go SDK.
func TestWrappers(t *testing.T) {
	cases := map[string]struct {
		lang         v1alpha1.Language
		code         string
		dependencies string
	}{
		"python": {lang: v1alpha1.LanguagePython},
		// The wrapper imports asyncio only when a handler returns a
		// coroutine.
		"python-async": {lang: v1alpha1.LanguagePython, code: strings.Replace(sampleHandlers[v1alpha1.LanguagePython], "def handler(", "async def handler(", 1)},
		"nodejs":       {lang: v1alpha1.LanguageNodeJS},
		// Without a go.mod the build makes one; with one, the wrapper must
		// import the function by the module path it declares.
		"go":            {lang: v1alpha1.LanguageGo},
		"go-own-module": {lang: v1alpha1.LanguageGo, dependencies: "module example.com/acme/greeter\n\ngo 1.23\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			testWrapper(t, newProgramOf(t, tc.lang, cmp.Or(tc.code, sampleHandlers[tc.lang]), tc.dependencies).start(t))
		})
	}
}

func testWrapper(t *testing.T, w *runningWrapper) {
	t.Helper()
	base := w.base
	ce, err := cloudevents.NewClientHTTP()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = cloudevents.ContextWithTarget(ctx, base)

	event := func(id, name string) cloudevents.Event {
		e := cloudevents.NewEvent()
		e.SetID(id)
		e.SetSource("/test")
		e.SetType("com.example.greet")
		if err := e.SetData(cloudevents.ApplicationJSON, map[string]string{"name": name}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for mode, mctx := range map[string]context.Context{
		"binary":     cloudevents.WithEncodingBinary(ctx),
		"structured": cloudevents.WithEncodingStructured(ctx),
	} {
		reply, result := ce.Request(mctx, event("req-"+mode, "ada"))
		if !cloudevents.IsACK(result) || reply == nil {
			t.Fatalf("%s: request not acknowledged: %v", mode, result)
		}
		if reply.Type() != "com.example.greet.response" || reply.Subject() != "req-"+mode || reply.Source() != "/lambda/greeter" {
			t.Errorf("%s: reply type %q subject %q source %q, want com.example.greet.response, req-%s, /lambda/greeter", mode, reply.Type(), reply.Subject(), reply.Source(), mode)
		}
		var data map[string]string
		if err := reply.DataAs(&data); err != nil {
			t.Fatal(err)
		}
		if data["greeting"] != "hello ada" || data["type"] != "com.example.greet" {
			t.Errorf("%s: reply data %v, want greeting 'hello ada' and type com.example.greet", mode, data)
		}
	}

	// A failing handler: status 500 and an error event.
	_, result := ce.Request(cloudevents.WithEncodingBinary(ctx), event("req-boom", "boom"))
	var hr *cehttp.Result
	if !errors.As(result, &hr) || hr.StatusCode != http.StatusInternalServerError {
		t.Errorf("failing handler: result %v, want HTTP 500", result)
	}

	// A CloudEvent without its required attributes: 400 saying what is
	// missing. (A request without CloudEvents headers is a plain one:
	// TestWrappersServeHTTP.)
	status, header, body := post(t, base, http.Header{"Content-Type": {"application/json"}, "Ce-Specversion": {"1.0"}}, `{"name":"ada"}`)
	if status != http.StatusBadRequest || header.Get("Ce-Type") != "dev.knative.lambda.invalid" || !strings.Contains(body, "missing id, source, type") {
		t.Errorf("an incomplete event: got %d, ce-type %q, body %s; want 400, dev.knative.lambda.invalid, and what is missing", status, header.Get("Ce-Type"), body)
	}

	// Graceful shutdown: a request in flight when SIGTERM arrives finishes.
	done := make(chan error, 1)
	go func() {
		_, result := ce.Request(cloudevents.WithEncodingBinary(ctx), event("req-slow", "slow"))
		if !cloudevents.IsACK(result) {
			done <- result
			return
		}
		done <- nil
	}()
	time.Sleep(300 * time.Millisecond)
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("a request in flight at SIGTERM failed: %v", err)
	}
	select {
	case err := <-w.exited:
		if err != nil {
			t.Errorf("the wrapper did not exit cleanly on SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the wrapper did not exit within 10s of SIGTERM")
	}
}

// post sends a raw request and returns the status, headers and body.
func post(t *testing.T, base string, h http.Header, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck // Read fully below.
	b, _ := io.ReadAll(resp.Body)
	var js any
	if json.Unmarshal(b, &js) != nil {
		t.Errorf("reply body is not JSON: %s", b)
	}
	return resp.StatusCode, resp.Header, string(b)
}
