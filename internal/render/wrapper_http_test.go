package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// httpHandlers are handlers written for a Lambda function URL, one per
// language, with one behaviour by path: echo the event as JSON, answer a
// plain value (/plain) or a string (/text), echo a binary body in base64
// (/binary), set cookies without a body (/cookies), fail (/boom), and set a
// header that would start another (/split).
var httpHandlers = map[v1alpha1.Language]string{
	v1alpha1.LanguagePython: `import base64
import json

def handler(event, context):
    path = event["rawPath"]
    if path == "/boom":
        raise ValueError("boom is not a path")
    if path == "/plain":
        return {"method": event["requestContext"]["http"]["method"]}
    if path == "/text":
        return "hello " + event["queryStringParameters"]["name"]
    if path == "/binary":
        return {"statusCode": 201, "headers": {"Content-Type": "application/octet-stream"}, "body": event["body"], "isBase64Encoded": True}
    if path == "/cookies":
        return {"statusCode": 204, "cookies": ["a=1; Path=/", "b=2"]}
    if path == "/split":
        return {"statusCode": 200, "headers": {"x-split": "one\r\nset-cookie: evil=1"}}
    return {"statusCode": 200, "headers": {"x-echo": "yes", "x-count": 1}, "body": json.dumps(event)}
`,
	v1alpha1.LanguageNodeJS: `exports.handler = async (event) => {
  const path = event.rawPath;
  if (path === '/boom') throw new Error('boom is not a path');
  if (path === '/plain') return { method: event.requestContext.http.method };
  if (path === '/text') return 'hello ' + event.queryStringParameters.name;
  if (path === '/binary') return { statusCode: 201, headers: { 'Content-Type': 'application/octet-stream' }, body: event.body, isBase64Encoded: true };
  if (path === '/cookies') return { statusCode: 204, cookies: ['a=1; Path=/', 'b=2'] };
  if (path === '/split') return { statusCode: 200, headers: { 'x-split': 'one\r\nset-cookie: evil=1' } };
  return { statusCode: 200, headers: { 'x-echo': 'yes', 'x-count': 1 }, body: JSON.stringify(event) };
};
`,
	v1alpha1.LanguageGo: `package function

import (
	"context"
	"encoding/json"
	"errors"
)

func Handle(ctx context.Context, event map[string]any) (any, error) {
	switch event["rawPath"] {
	case "/boom":
		return nil, errors.New("boom is not a path")
	case "/plain":
		return map[string]any{"method": event["requestContext"].(map[string]any)["http"].(map[string]any)["method"]}, nil
	case "/text":
		return "hello " + event["queryStringParameters"].(map[string]any)["name"].(string), nil
	case "/binary":
		return map[string]any{"statusCode": 201, "headers": map[string]string{"Content-Type": "application/octet-stream"}, "body": event["body"], "isBase64Encoded": true}, nil
	case "/cookies":
		return map[string]any{"statusCode": 204, "cookies": []string{"a=1; Path=/", "b=2"}}, nil
	case "/split":
		return map[string]any{"statusCode": 200, "headers": map[string]string{"x-split": "one\r\nset-cookie: evil=1"}}, nil
	}
	b, err := json.Marshal(event)
	return map[string]any{"statusCode": 200, "headers": map[string]any{"x-echo": "yes", "x-count": 1}, "body": string(b)}, err
}
`,
}

// An httpExchange is one plain request to a wrapper and the response it
// must get.
type httpExchange struct {
	reason  string
	method  string
	target  string
	header  http.Header
	body    []byte
	status  int
	headers map[string][]string
	// want is the whole body wanted, when set, and wantJSON its JSON
	// value; echo is a subset of the event the handler echoed.
	want     []byte
	wantJSON any
	echo     map[string]any
}

// httpExchanges hold a wrapper to the Lambda function URL contract, for a
// handler of httpHandlers and a limit of 64 bytes.
var httpExchanges = map[string]httpExchange{
	"Get": {
		reason: "A GET comes as a function URL event: its path and query as sent, repeated query keys and headers joined by commas, cookies apart, no body; the handler's response comes back as it says, and no CloudEvent.",
		method: http.MethodGet, target: "/orders/42?a=1&a=2&b=",
		header: http.Header{"X-Multi": {"1", "2"}, "Cookie": {"c=1; d=2"}},
		status: http.StatusOK, headers: map[string][]string{"X-Echo": {"yes"}, "X-Count": {"1"}, "Content-Type": {"application/json"}, "Ce-Type": nil},
		echo: map[string]any{
			"version": "2.0", "rawPath": "/orders/42", "rawQueryString": "a=1&a=2&b=",
			"queryStringParameters": map[string]any{"a": "1,2", "b": ""},
			"headers":               map[string]any{"x-multi": "1,2"},
			"cookies":               []any{"c=1", "d=2"},
			"requestContext":        map[string]any{"http": map[string]any{"method": "GET", "path": "/orders/42"}},
			"isBase64Encoded":       false,
		},
	},
	"JSONPost": {
		reason: "A JSON POST without CloudEvents headers is a plain request, its body the text sent.",
		method: http.MethodPost, target: "/orders",
		header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"id":42}`),
		status: http.StatusOK,
		echo:   map[string]any{"body": `{"id":42}`, "isBase64Encoded": false, "requestContext": map[string]any{"http": map[string]any{"method": "POST"}}},
	},
	"TextPut": {
		reason: "A text body of any method reaches the handler as text.",
		method: http.MethodPut, target: "/notes/1",
		header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: []byte("héllo"),
		status: http.StatusOK,
		echo:   map[string]any{"body": "héllo", "isBase64Encoded": false, "requestContext": map[string]any{"http": map[string]any{"method": "PUT"}}},
	},
	"BinaryBody": {
		reason: "A binary body comes in base64, and a base64 body in a response goes out as its bytes.",
		method: http.MethodPost, target: "/binary",
		header: http.Header{"Content-Type": {"application/octet-stream"}}, body: []byte{0, 1, 2, 0xff, 0xfe},
		status: http.StatusCreated, headers: map[string][]string{"Content-Type": {"application/octet-stream"}},
		want: []byte{0, 1, 2, 0xff, 0xfe},
	},
	"PlainValue": {
		reason: "A result without a statusCode is a 200 whose body is its JSON.",
		method: http.MethodGet, target: "/plain",
		status: http.StatusOK, headers: map[string][]string{"Content-Type": {"application/json"}},
		wantJSON: map[string]any{"method": "GET"},
	},
	"Head": {
		reason: "A HEAD gets the response's status and headers, without its body.",
		method: http.MethodHead, target: "/plain",
		status: http.StatusOK, want: []byte{},
	},
	"String": {
		reason: "A string result is the body as it is, as Lambda sends it.",
		method: http.MethodGet, target: "/text?name=ada",
		status: http.StatusOK, want: []byte("hello ada"),
	},
	"Cookies": {
		reason: "Cookies become Set-Cookie headers, and a 204 has no body.",
		method: http.MethodDelete, target: "/cookies",
		status: http.StatusNoContent, headers: map[string][]string{"Set-Cookie": {"a=1; Path=/", "b=2"}},
		want: []byte{},
	},
	"Fails": {
		reason: "A handler's failure is a 500 whose body does not repeat its text.",
		method: http.MethodPatch, target: "/boom",
		status: http.StatusInternalServerError, wantJSON: map[string]any{"error": "the handler failed; the function's log says why"},
	},
	"SplitHeader": {
		reason: "A header value that would end the header block is the handler's failure, not a second header.",
		method: http.MethodGet, target: "/split",
		status: http.StatusInternalServerError, headers: map[string][]string{"Set-Cookie": nil, "X-Split": nil},
	},
	"AtLimit": {
		reason: "A plain body of exactly the limit is served.",
		method: http.MethodPost, target: "/limit",
		header: http.Header{"Content-Type": {"text/plain"}}, body: bytes.Repeat([]byte("x"), 64),
		status: http.StatusOK, echo: map[string]any{"body": strings.Repeat("x", 64)},
	},
	"OverLimit": {
		reason: "A plain body over the limit is refused, as an event's is.",
		method: http.MethodPost, target: "/limit",
		header: http.Header{"Content-Type": {"text/plain"}}, body: bytes.Repeat([]byte("x"), 65),
		status: http.StatusRequestEntityTooLarge,
	},
	"EventMissingAttributes": {
		reason: "A request with a ce-specversion header is a CloudEvent, and one without its required attributes is refused.",
		method: http.MethodPost, target: "/",
		header: http.Header{"Ce-Specversion": {"1.0"}, "Content-Type": {"application/json"}}, body: []byte(`{}`),
		status: http.StatusBadRequest, headers: map[string][]string{"Ce-Type": {"dev.knative.lambda.invalid"}},
	},
}

// TestWrappersServeHTTP runs each language's wrapper for real against a
// handler written for a Lambda function URL and sends it plain requests,
// as curl does.
func TestWrappersServeHTTP(t *testing.T) {
	for _, lang := range []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo} {
		t.Run(string(lang), func(t *testing.T) {
			w := newProgramOf(t, lang, httpHandlers[lang], "").start(t, "LAMBDA_MAX_REQUEST_BYTES=64")
			for name, tc := range httpExchanges {
				t.Run(name, func(t *testing.T) {
					status, header, body := send(t, w.base, tc)
					if status != tc.status {
						t.Fatalf("%s\n%s %s: status %d, want %d; body %s", tc.reason, tc.method, tc.target, status, tc.status, body)
					}
					for name, want := range tc.headers {
						if diff := cmp.Diff(want, header.Values(name)); diff != "" {
							t.Errorf("%s\n%s %s: header %s: -want, +got:\n%s", tc.reason, tc.method, tc.target, name, diff)
						}
					}
					if tc.want != nil && !bytes.Equal(tc.want, body) {
						t.Errorf("%s\n%s %s: body %q, want %q", tc.reason, tc.method, tc.target, body, tc.want)
					}
					if tc.wantJSON != nil {
						var got any
						if err := json.Unmarshal(body, &got); err != nil {
							t.Fatalf("%s\n%s %s: the body is not JSON: %v: %s", tc.reason, tc.method, tc.target, err, body)
						}
						if diff := cmp.Diff(tc.wantJSON, got); diff != "" {
							t.Errorf("%s\n%s %s: the body: -want, +got:\n%s", tc.reason, tc.method, tc.target, diff)
						}
					}
					if tc.echo != nil {
						var event map[string]any
						if err := json.Unmarshal(body, &event); err != nil {
							t.Fatalf("%s\n%s %s: the echoed event is not JSON: %v: %s", tc.reason, tc.method, tc.target, err, body)
						}
						if diff := cmp.Diff(tc.echo, subset(tc.echo, event)); diff != "" {
							t.Errorf("%s\n%s %s: the event the handler got: -want, +got:\n%s", tc.reason, tc.method, tc.target, diff)
						}
						if err := lambdaTime(event); err != nil {
							t.Errorf("%s %s: the event's requestContext.time: %v", tc.method, tc.target, err)
						}
					}
				})
			}
			if !w.logged("boom is not a path", `"method":"PATCH"`) {
				t.Errorf("the log lacks the failure's text or the failed request's method:\n%s", w.logs.String())
			}
		})
	}
}

// lambdaTimeLayout is how a function URL event's requestContext.time reads
// in AWS Lambda's documentation: 12/Mar/2020:19:03:58 +0000.
const lambdaTimeLayout = "02/Jan/2006:15:04:05 -0700"

// lambdaTime says how an event's requestContext.time is not in Lambda's
// layout or not the second of its timeEpoch.
func lambdaTime(event map[string]any) error {
	rc, _ := event["requestContext"].(map[string]any)
	text, _ := rc["time"].(string)
	at, err := time.Parse(lambdaTimeLayout, text)
	if err != nil {
		return err
	}
	epoch, _ := rc["timeEpoch"].(float64)
	if want := time.UnixMilli(int64(epoch)).UTC().Truncate(time.Second); !at.Equal(want) {
		return fmt.Errorf("%q is not timeEpoch %v, %s", text, epoch, want.Format(lambdaTimeLayout))
	}
	return nil
}

// send sends an exchange's request and returns the status, headers and
// body of the response.
func send(t *testing.T, base string, tc httpExchange) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, tc.method, base+tc.target, bytes.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range tc.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck // Read fully below.
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// subset is got with only the keys of want, at every depth of objects.
func subset(want, got map[string]any) map[string]any {
	out := map[string]any{}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			continue
		}
		wm, wok := w.(map[string]any)
		gm, gok := g.(map[string]any)
		if wok && gok {
			g = subset(wm, gm)
		}
		out[k] = g
	}
	return out
}
