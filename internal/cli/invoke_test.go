package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// greeter greets data.name, or a plain request's query's name with its
// method and body, and fails for "boom".
const greeter = `def handler(event, context):
    if "requestContext" in event:
        name = event["queryStringParameters"]["name"]
        if name == "boom":
            raise ValueError("boom is not a name")
        return {"statusCode": 201, "headers": {"content-type": "text/plain"}, "body": "hello %s by %s with %s" % (name, event["requestContext"]["http"]["method"], event.get("body"))}
    if event["data"]["name"] == "boom":
        raise ValueError("boom is not a name")
    return {"greeting": "hello " + event["data"]["name"]}
`

// startPythonWrapper runs the Python wrapper render puts into images, with
// code as its handler, as the image runs it, and returns its URL.
func startPythonWrapper(t *testing.T, name, code string) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed on this machine (CI installs it)")
	}
	rt, err := render.ResolveRuntime(&v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)}, render.BuildEnv{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o750); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{filepath.Join(src, rt.CodeFile): code}
	for f, content := range rt.Files {
		files[filepath.Join(dir, f)] = content
	}
	for f, content := range files {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := loopback.Port(t)
	cmd := exec.Command("python3", filepath.Join(dir, "lambda_wrapper.py")) //nolint:noctx // The test stops it.
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), render.EnvHandler+"="+rt.Handler, "PYTHONPATH="+src, "K_SERVICE="+name)
	logs := process.ForTest(t, "the wrapper", cmd)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get(url + render.PathHealth); err == nil { //nolint:noctx // A test poll.
			_ = r.Body.Close()
			return url
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the wrapper did not answer within 30s:\n%s", logs.String())
		}
	}
}

// TestInvoke sends events with kubectl lambda invoke to a function whose
// URL is a real Python wrapper, and to a function's Broker.
func TestInvoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newScene(ctx, t)
	url := startPythonWrapper(t, "greeter", greeter)

	// A Broker accepts an event and answers nothing.
	var brokered []string
	broker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		brokered = append(brokered, r.Header.Get("Ce-Type"))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer broker.Close()
	b := &unstructured.Unstructured{}
	b.SetAPIVersion("eventing.knative.dev/v1")
	b.SetKind("Broker")
	b.SetNamespace(s.namespace)
	b.SetName("default")
	if err := s.kube.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(b.Object, broker.URL, "status", "address", "url"); err != nil {
		t.Fatal(err)
	}
	if err := s.kube.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}

	// An ingress that routes by Host, at an address no name resolves to,
	// as the local cluster's.
	var hosts []string
	wrapper, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(wrapper)
	ingress := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		proxy.ServeHTTP(w, r)
	}))
	defer ingress.Close()

	for name, st := range map[string]v1alpha1.WorkloadObservation{
		"greeter":  {Phase: v1alpha1.PhaseReady, URL: url, Eventing: &v1alpha1.EventingObservation{Broker: "default"}},
		"routed":   {Phase: v1alpha1.PhaseReady, URL: "http://routed.apps.lambda.invalid"},
		"building": {Phase: v1alpha1.PhaseBuilding},
	} {
		fn := newFunction(s.namespace, name)
		if err := s.kube.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
		fn.Status.AtProvider.WorkloadObservation = st
		if err := s.kube.Status().Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	dataFile := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(dataFile, []byte(`{"name": "grace"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	type reply struct {
		Type    string            `json:"type"`
		Source  string            `json:"source"`
		Subject string            `json:"subject"`
		Data    map[string]string `json:"data"`
	}
	cases := map[string]struct {
		reason    string
		args      []string
		wantReply *reply
		wantOut   []string
		wantErr   string
	}{
		"Reply": {
			reason:    "The handler's reply is printed as a CloudEvent.",
			args:      []string{"invoke", "greeter", "--type=com.example.greet", `--data={"name": "ada"}`},
			wantReply: &reply{Type: "com.example.greet.response", Source: "/lambda/greeter", Data: map[string]string{"greeting": "hello ada"}},
		},
		"DataFromFile": {
			reason:    "--data=@FILE sends the file's JSON.",
			args:      []string{"invoke", "greeter", "--type=com.example.greet", "--data=@" + dataFile},
			wantReply: &reply{Type: "com.example.greet.response", Source: "/lambda/greeter", Data: map[string]string{"greeting": "hello grace"}},
		},
		"HandlerFailed": {
			reason:    "A failing handler's error event is printed, and the command fails.",
			args:      []string{"invoke", "lambdafunction/greeter", "--type=com.example.greet", `--data={"name": "boom"}`},
			wantReply: &reply{Type: "com.example.greet.error", Source: "/lambda/greeter", Data: map[string]string{"error": "the handler failed; the function's log says why"}},
			wantErr:   "the function's handler failed",
		},
		"ThroughBroker": {
			reason:  "Through the Broker, the event is accepted without a reply.",
			args:    []string{"invoke", "greeter", "--broker", "--type=com.example.greet", `--data={"name": "ada"}`},
			wantOut: []string{"accepted event"},
		},
		"ThroughIngress": {
			reason:    "--ingress connects to the ingress's address and keeps the URL's host as the Host the ingress routes by.",
			args:      []string{"invoke", "routed", "--ingress=" + strings.TrimPrefix(ingress.URL, "http://"), "--type=com.example.greet", `--data={"name": "ada"}`},
			wantReply: &reply{Type: "com.example.greet.response", Source: "/lambda/greeter", Data: map[string]string{"greeting": "hello ada"}},
		},
		"PlainHTTP": {
			reason:  "--http sends a plain request to the path and prints the response as curl -i does.",
			args:    []string{"invoke", "greeter", "--http", "--path=/greet?name=ada"},
			wantOut: []string{"HTTP/1.1 201 Created\nContent-Length: 26\nContent-Type: text/plain\n", "\n\nhello ada by GET with None"},
		},
		"PlainHTTPWithData": {
			reason:  "--http with --data posts it, through the ingress as events go.",
			args:    []string{"invoke", "routed", "--http", "--ingress=" + strings.TrimPrefix(ingress.URL, "http://"), "--path=greet?name=ada", "--data=some text"},
			wantOut: []string{"hello ada by POST with some text"},
		},
		"PlainHTTPFailed": {
			reason:  "A plain request the handler fails prints the 500, and the command fails.",
			args:    []string{"invoke", "greeter", "--http", "--method=PUT", "--path=/?name=boom"},
			wantOut: []string{"HTTP/1.1 500 Internal Server Error", "the function's log says why"},
			wantErr: "answered HTTP 500",
		},
		"PlainHTTPToBroker": {
			reason:  "A Broker takes only events.",
			args:    []string{"invoke", "greeter", "--http", "--broker"},
			wantErr: "a Broker takes only events",
		},
		"NoURL": {
			reason:  "A function without a URL yet says so, with its phase.",
			args:    []string{"invoke", "building"},
			wantErr: "has no URL yet (phase Building)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := s.kubectlLambda(ctx, time.Now(), tc.args...)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("%s\n%v: %v\n%s", tc.reason, tc.args, err, out)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%s\n%v: error %v, want %q", tc.reason, tc.args, err, tc.wantErr)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("%s\n%v: printed %q, want %q in it", tc.reason, tc.args, out, want)
				}
			}
			if tc.wantReply == nil {
				return
			}
			got := &reply{}
			if err := json.Unmarshal([]byte(out), got); err != nil {
				t.Fatalf("%s\n%v: the reply printed is not a JSON event: %v\n%s", tc.reason, tc.args, err, out)
			}
			if got.Subject == "" {
				t.Errorf("%s\n%v: the reply has no subject, want the id of the event sent", tc.reason, tc.args)
			}
			got.Subject = ""
			if diff := cmp.Diff(tc.wantReply, got); diff != "" {
				t.Errorf("%s\n%v: -want, +got reply:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"com.example.greet"}, brokered); diff != "" {
		t.Errorf("events the Broker received: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"routed.apps.lambda.invalid", "routed.apps.lambda.invalid"}, hosts); diff != "" {
		t.Errorf("the Hosts the ingress was asked for: -want, +got:\n%s", diff)
	}
}
