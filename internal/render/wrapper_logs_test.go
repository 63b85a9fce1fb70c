package render

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/go-cmp/cmp"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A logLine is what the tests read of one line a wrapper logs.
type logLine struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	ID      string `json:"id,omitempty"`
	Type    string `json:"type,omitempty"`
	Method  string `json:"method,omitempty"`
	Path    string `json:"path,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Status  int    `json:"status,omitempty"`
	TraceID string `json:"traceId,omitempty"`
	SpanID  string `json:"spanId,omitempty"`
}

// traceparentOf reads a W3C traceparent: its trace, span and flags.
var traceparentOf = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)

// The caller's trace context that the tests send.
const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
	callerParent = "00-" + callerTrace + "-" + callerSpan + "-01"
	greetType    = "com.example.greet"
)

// TestWrappersOperable runs each language's wrapper for real and reads
// what an operator reads: one JSON line per invocation with its id, type,
// outcome, status and duration; the handler's own lines with their level
// and the invocation's id and trace, those below LAMBDA_LOG_LEVEL dropped;
// and the W3C trace context carried from the event to its reply.
func TestWrappersOperable(t *testing.T) {
	for _, lang := range []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo} {
		t.Run(string(lang), func(t *testing.T) {
			testOperable(t, newWrapperProgram(t, lang, "").start(t, EnvLogLevel+"=info"))
		})
	}
	// A coroutine handler runs on its connection's event loop, which is
	// kept across the connection's invocations: each still logs as its own.
	t.Run("python-async", func(t *testing.T) {
		code := strings.Replace(sampleHandlers[v1alpha1.LanguagePython], "def handler(", "async def handler(", 1)
		testOperable(t, newProgramOf(t, v1alpha1.LanguagePython, code, "").start(t, EnvLogLevel+"=info"))
	})
	// A handler that returns its result, not a promise, is answered at
	// once, in its invocation's context alike.
	t.Run("nodejs-sync", func(t *testing.T) {
		code := strings.Replace(sampleHandlers[v1alpha1.LanguageNodeJS], "async (event, context) =>", "(event, context) =>", 1)
		code = strings.Replace(code, "await new Promise((r) => setTimeout(r, 1000));", "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);", 1)
		if code == sampleHandlers[v1alpha1.LanguageNodeJS] || strings.Contains(code, "async") {
			t.Fatal("the Node.js sample handler is no longer made synchronous by this test")
		}
		testOperable(t, newProgramOf(t, v1alpha1.LanguageNodeJS, code, "").start(t, EnvLogLevel+"=info"))
	})
}

func testOperable(t *testing.T, w *runningWrapper) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ce, err := cloudevents.NewClientHTTP()
	if err != nil {
		t.Fatal(err)
	}
	ctx = cloudevents.ContextWithTarget(ctx, w.base)
	event := func(id, name string, ext map[string]string) cloudevents.Event {
		e := cloudevents.NewEvent()
		e.SetID(id)
		e.SetSource("/test")
		e.SetType(greetType)
		for k, v := range ext {
			e.SetExtension(k, v)
		}
		if err := e.SetData(cloudevents.ApplicationJSON, map[string]string{"name": name}); err != nil {
			t.Fatal(err)
		}
		return e
	}

	cases := map[string]struct {
		reason    string
		ctx       context.Context
		ext       map[string]string
		wantTrace string // empty: a new trace
		wantFlags string
		wantState string
	}{
		"binary": {
			reason:    "ce-traceparent and ce-tracestate are the event's trace context.",
			ctx:       cloudevents.WithEncodingBinary(ctx),
			ext:       map[string]string{"traceparent": callerParent, "tracestate": "acme=1"},
			wantTrace: callerTrace, wantFlags: "01", wantState: "acme=1",
		},
		"structured": {
			reason:    "The traceparent attribute of a structured event is its trace context.",
			ctx:       cloudevents.WithEncodingStructured(ctx),
			ext:       map[string]string{"traceparent": callerParent},
			wantTrace: callerTrace, wantFlags: "01",
		},
		"header": {
			reason:    "Without the extension, the request's traceparent header is the caller's trace context.",
			ctx:       cehttp.WithCustomHeader(cloudevents.WithEncodingBinary(ctx), http.Header{"Traceparent": {callerParent}}),
			wantTrace: callerTrace, wantFlags: "01",
		},
		"malformed": {
			reason:    "A traceparent whose trace id is all zeros names no trace: a new one starts, not sampled.",
			ctx:       cloudevents.WithEncodingBinary(ctx),
			ext:       map[string]string{"traceparent": "00-" + strings.Repeat("0", 32) + "-" + callerSpan + "-01"},
			wantFlags: "00",
		},
	}
	var want []logLine
	for name, tc := range cases {
		reply, result := ce.Request(tc.ctx, event("req-"+name, "chatty", tc.ext))
		if !cloudevents.IsACK(result) || reply == nil {
			t.Fatalf("%s: not acknowledged: %v", name, result)
		}
		tp, _ := reply.Extensions()["traceparent"].(string)
		m := traceparentOf.FindStringSubmatch(tp)
		if m == nil {
			t.Fatalf("%s: %s\nreply traceparent %q is not a W3C traceparent", name, tc.reason, tp)
		}
		trace, span, flags := m[1], m[2], m[3]
		newTrace := tc.wantTrace == "" && trace != callerTrace && strings.Trim(trace, "0") != ""
		if (trace != tc.wantTrace && !newTrace) || span == callerSpan || flags != tc.wantFlags {
			t.Errorf("%s: %s\nreply traceparent %q: want trace %q (empty: a new one), a span of its own, flags %s", name, tc.reason, tp, tc.wantTrace, tc.wantFlags)
		}
		if state, _ := reply.Extensions()["tracestate"].(string); state != tc.wantState {
			t.Errorf("%s: reply tracestate %q, want %q", name, state, tc.wantState)
		}
		// The handler's line and the invocation's carry the reply's span.
		want = append(want,
			logLine{Level: "warn", Msg: "greeting chatty", ID: "req-" + name, Type: greetType, TraceID: trace, SpanID: span},
			logLine{Level: "info", Msg: "invocation", ID: "req-" + name, Type: greetType, Outcome: "replied", Status: http.StatusOK, TraceID: trace, SpanID: span},
		)
	}

	// A failing handler's invocation, an event that lacks its attributes,
	// and a plain request, which this handler fails on: it reads an
	// event's data.
	_, _ = ce.Request(cloudevents.WithEncodingBinary(ctx), event("req-boom", "boom", map[string]string{"traceparent": callerParent}))
	post(t, w.base, http.Header{"Content-Type": {"application/json"}, "Ce-Specversion": {"1.0"}}, `{"name":"ada"}`)
	post(t, w.base+"/orders?id=42", http.Header{"Content-Type": {"application/json"}, "Traceparent": {callerParent}}, `{"name":"ada"}`)
	want = append(want,
		logLine{Level: "error", Msg: "the handler failed", ID: "req-boom", Type: greetType, TraceID: callerTrace},
		logLine{Level: "error", Msg: "invocation", ID: "req-boom", Type: greetType, Outcome: "failed", Status: http.StatusInternalServerError, TraceID: callerTrace},
		logLine{Level: "warn", Msg: "invocation", Outcome: "refused", Status: http.StatusBadRequest},
		logLine{Level: "error", Msg: "the handler failed", Method: http.MethodPost, Path: "/orders", TraceID: callerTrace},
		logLine{Level: "error", Msg: "invocation", Method: http.MethodPost, Path: "/orders", Outcome: "failed", Status: http.StatusInternalServerError, TraceID: callerTrace},
	)

	got := waitLogLines(ctx, t, w, len(want))
	for i := range got {
		if got[i].ID == "req-boom" || got[i].Method != "" {
			// Neither's reply, an error, is read for its span.
			got[i].SpanID = ""
		}
		if got[i].Method != "" && got[i].ID != "" {
			// A plain request's id is the wrapper's own, a new one each.
			got[i].ID = ""
		}
	}
	sortLogLines(want)
	sortLogLines(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the wrapper's log lines, its listening line aside: -want, +got:\n%s", diff)
	}
}

// waitLogLines waits until the wrapper has logged n lines besides the one
// that says it listens, checks that every line is a JSON object with a time,
// a level and a message and every invocation line a duration, and returns
// them.
func waitLogLines(ctx context.Context, t *testing.T, w *runningWrapper, n int) []logLine {
	t.Helper()
	for {
		var lines []logLine
		for _, raw := range strings.Split(strings.TrimSpace(w.logs.String()), "\n") {
			var fields map[string]any
			if err := json.Unmarshal([]byte(raw), &fields); err != nil {
				t.Fatalf("the wrapper logged a line that is not a JSON object: %q", raw)
			}
			if _, ok := fields["time"].(string); !ok {
				t.Errorf("a log line has no time: %s", raw)
			}
			if d, ok := fields["durationMs"].(float64); fields["msg"] == "invocation" && fields["outcome"] != "refused" && (!ok || d < 0) {
				t.Errorf("an invocation line has no duration: %s", raw)
			}
			l := logLine{}
			_ = json.Unmarshal([]byte(raw), &l)
			if l.Msg != "listening" {
				lines = append(lines, l)
			}
		}
		if len(lines) >= n {
			return lines
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the wrapper logged %d lines, want %d:\n%s", len(lines), n, w.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func sortLogLines(ls []logLine) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		return a.ID+a.Method+a.Msg+a.Level < b.ID+b.Method+b.Msg+b.Level
	})
}
