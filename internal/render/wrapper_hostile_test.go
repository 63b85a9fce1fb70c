package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
)

// defaultMaxBody is the limit every wrapper holds when the function sets none.
const defaultMaxBody = 6 << 20

// A wantReply is what one HTTP response on a raw connection must be. Empty
// fields are not checked: the HTTP servers of Go and Node.js refuse broken
// framing themselves, with replies that are not CloudEvents.
type wantReply struct {
	status    int
	ceType    string
	subject   string
	bodyHas   string
	bodyLacks string
	// noEvent says the reply is no CloudEvent: no ce- headers, no body.
	noEvent bool
}

// An exchange is raw bytes a client writes on one connection and the replies
// it must get, in order.
type exchange struct {
	reason  string
	request []byte
	want    []wantReply
	// closes says the wrapper must end the connection after the last reply,
	// because the rest of the request was never read.
	closes bool
	// only names the wrappers held to the exchange; empty means all.
	only []v1alpha1.Language
}

// ceHeaders are the headers of a binary-mode CloudEvent with JSON data.
func ceHeaders(id string) string {
	return "POST / HTTP/1.1\r\nHost: wrapper\r\nCe-Specversion: 1.0\r\nCe-Id: " + id +
		"\r\nCe-Source: /test\r\nCe-Type: com.example.greet\r\nContent-Type: application/json\r\n"
}

// sized is a binary-mode CloudEvent whose body has a Content-Length.
func sized(id, data string) []byte {
	return []byte(ceHeaders(id) + "Content-Length: " + strconv.Itoa(len(data)) + "\r\n\r\n" + data)
}

// chunked is a binary-mode CloudEvent whose body comes in 16 KiB chunks.
func chunked(id, data string) []byte {
	var b strings.Builder
	b.WriteString(ceHeaders(id) + "Transfer-Encoding: chunked\r\n\r\n")
	for len(data) > 0 {
		n := min(len(data), 16<<10)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, data[:n])
		data = data[n:]
	}
	b.WriteString("0\r\n\r\n")
	return []byte(b.String())
}

// padded is JSON data naming ada of exactly n bytes.
func padded(n int) string {
	const frame = `{"name":"ada","pad":""}`
	return frame[:len(frame)-2] + strings.Repeat("x", n-len(frame)) + `"}`
}

// nested is JSON n arrays deep.
func nested(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

func greeted(id string) wantReply {
	return wantReply{status: http.StatusOK, ceType: "com.example.greet.response", subject: id, bodyHas: "hello ada"}
}

func refused(status int) wantReply {
	return wantReply{status: status, ceType: "dev.knative.lambda.invalid"}
}

// limitExchanges hold a wrapper to its request-body limit, declared and
// chunked.
func limitExchanges(limit int) []exchange {
	tooLarge := refused(http.StatusRequestEntityTooLarge)
	tooLarge.bodyHas = fmt.Sprintf("larger than %d bytes", limit)
	return []exchange{
		{
			reason:  "A body of exactly the limit is served.",
			request: sized("at-limit", padded(limit)),
			want:    []wantReply{greeted("at-limit")},
		},
		{
			reason:  "A body declared one byte over the limit is refused before it is sent.",
			request: []byte(ceHeaders("over-limit") + "Content-Length: " + strconv.Itoa(limit+1) + "\r\n\r\n"),
			want:    []wantReply{tooLarge},
		},
		{
			reason:  "A chunked body of exactly the limit is served.",
			request: chunked("chunked-at-limit", padded(limit)),
			want:    []wantReply{greeted("chunked-at-limit")},
		},
		{
			reason:  "A chunked body one byte over the limit is refused.",
			request: chunked("chunked-over-limit", padded(limit+1)),
			want:    []wantReply{tooLarge},
			closes:  true,
		},
	}
}

// hostileExchanges are requests no well-behaved sender makes, the one that
// every proxy may (a chunked body), and handlers that fail or return
// nothing.
var hostileExchanges = []exchange{
	{
		reason:  "A handler that returns nothing answers 202 without an event, so the Broker ingests nothing.",
		request: sized("quiet", `{"name":"quiet"}`),
		want:    []wantReply{{status: http.StatusAccepted, noEvent: true}},
	},
	{
		reason:  "A chunked event is read whole, and the next request on its connection is a request of its own.",
		request: append(chunked("chunked-first", `{"name":"ada"}`), sized("chunked-second", `{"name":"ada"}`)...),
		want:    []wantReply{greeted("chunked-first"), greeted("chunked-second")},
	},
	{
		reason:  "A negative Content-Length is refused at once, not read until the client closes.",
		request: []byte(ceHeaders("negative") + "Content-Length: -1\r\n\r\n"),
		want:    []wantReply{{status: http.StatusBadRequest}},
		closes:  true,
	},
	{
		// Go's and Node's servers frame such a request by its
		// Transfer-Encoding, as RFC 9112 allows, and so does Knative's
		// queue-proxy in front of them; Python's wrapper frames bodies itself
		// and refuses the ambiguity instead.
		reason:  "Content-Length and Transfer-Encoding together are refused: two parsers may frame them differently.",
		request: []byte(ceHeaders("smuggled") + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
		want:    []wantReply{{status: http.StatusBadRequest}},
		closes:  true,
		only:    []v1alpha1.Language{v1alpha1.LanguagePython},
	},
	{
		reason:  "Data nested 100,000 deep gets a reply, not a dropped connection.",
		request: sized("deep-data", nested(100000)),
		want:    []wantReply{refused(http.StatusBadRequest)},
	},
	{
		reason: "A structured event nested 100,000 deep gets a reply, not a dropped connection.",
		request: []byte("POST / HTTP/1.1\r\nHost: wrapper\r\nContent-Type: application/cloudevents+json\r\nContent-Length: " +
			strconv.Itoa(len(`{"data":`+nested(100000)+`}`)) + "\r\n\r\n" + `{"data":` + nested(100000) + `}`),
		want: []wantReply{refused(http.StatusBadRequest)},
	},
	{
		reason:  "A handler's failure is an error event that does not repeat its text.",
		request: sized("boom", `{"name":"boom"}`),
		want:    []wantReply{{status: http.StatusInternalServerError, ceType: "com.example.greet.error", subject: "boom", bodyHas: "the function's log", bodyLacks: "boom is not a name"}},
	},
	{
		reason:  "A result JSON cannot hold is a failure of the handler, answered as one.",
		request: sized("opaque", `{"name":"opaque"}`),
		want:    []wantReply{{status: http.StatusInternalServerError, ceType: "com.example.greet.error", subject: "opaque", bodyHas: "the function's log"}},
	},
}

// TestWrappersRefuse runs each language's wrapper for real and talks to it
// over raw connections as a hostile or careless client would.
func TestWrappersRefuse(t *testing.T) {
	for _, lang := range []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo} {
		t.Run(string(lang), func(t *testing.T) {
			p := newWrapperProgram(t, lang, "")
			t.Run("default", func(t *testing.T) {
				w := p.start(t)
				for _, x := range append(limitExchanges(defaultMaxBody), hostileExchanges...) {
					if len(x.only) == 0 || slices.Contains(x.only, lang) {
						x.run(t, w)
					}
				}
				// The text the caller did not get is in the log.
				if !w.logged("boom is not a name") {
					t.Error("the handler's failure text is not in the wrapper's log")
				}
			})
			t.Run("configured", func(t *testing.T) {
				w := p.start(t, EnvMaxRequestBytes+"=65536")
				for _, x := range limitExchanges(65536) {
					x.run(t, w)
				}
			})
			// A setting the wrapper cannot use stops it at once, naming the
			// variable, instead of serving with another value.
			for _, bad := range []string{EnvMaxRequestBytes + "=6MB", EnvLogLevel + "=trace"} {
				name, _, _ := strings.Cut(bad, "=")
				t.Run("bad-"+name, func(t *testing.T) {
					cmd, logs := p.command(loopback.Port(t), bad)
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					exited := make(chan error, 1)
					go func() { exited <- cmd.Wait() }()
					select {
					case err := <-exited:
						if err == nil || !strings.Contains(logs.String(), name) {
							t.Errorf("a wrapper given %s exited with %v and logged %q; want a failure naming the variable", bad, err, logs.String())
						}
					case <-time.After(30 * time.Second):
						_ = cmd.Process.Kill()
						t.Errorf("a wrapper given %s still runs after 30s; want it to refuse to start", bad)
					}
				})
			}
		})
	}
}

// run writes the exchange's request on a new connection and checks every
// reply. The write runs on its own, so a wrapper that refuses early and
// stops reading cannot block the test.
func (x exchange) run(t *testing.T, w *runningWrapper) {
	t.Helper()
	u, err := url.Parse(w.base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() //nolint:errcheck // Only reads matter.
	go func() { _, _ = conn.Write(x.request) }()
	r := bufio.NewReader(conn)
	for i, want := range x.want {
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Errorf("%s\nreply %d: %v", x.reason, i, err)
			return
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Errorf("%s\nreply %d body: %v", x.reason, i, err)
			return
		}
		if got := check(want, resp, string(body)); got != "" {
			t.Errorf("%s\nreply %d: %s", x.reason, i, got)
		}
	}
	if !x.closes {
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := r.Read(make([]byte, 1)); n > 0 || !ended(err) {
		t.Errorf("%s\nthe connection still serves after the last reply (read %d bytes, %v); want it closed", x.reason, n, err)
	}
}

// ended is whether a read error means the peer closed the connection.
func ended(err error) bool {
	var ne net.Error
	return err != nil && (!errors.As(err, &ne) || !ne.Timeout())
}

// check says how a reply differs from what is wanted, or nothing.
func check(want wantReply, resp *http.Response, body string) string {
	var diffs []string
	if resp.StatusCode != want.status {
		diffs = append(diffs, fmt.Sprintf("status %d, want %d", resp.StatusCode, want.status))
	}
	if want.ceType != "" && resp.Header.Get("Ce-Type") != want.ceType {
		diffs = append(diffs, fmt.Sprintf("ce-type %q, want %q", resp.Header.Get("Ce-Type"), want.ceType))
	}
	if want.subject != "" && resp.Header.Get("Ce-Subject") != want.subject {
		diffs = append(diffs, fmt.Sprintf("ce-subject %q, want %q", resp.Header.Get("Ce-Subject"), want.subject))
	}
	if want.bodyHas != "" && !strings.Contains(body, want.bodyHas) {
		diffs = append(diffs, fmt.Sprintf("body lacks %q", want.bodyHas))
	}
	if want.noEvent && (resp.Header.Get("Ce-Type") != "" || resp.Header.Get("Ce-Id") != "" || body != "") {
		diffs = append(diffs, fmt.Sprintf("an event of type %q with body %q, want none", resp.Header.Get("Ce-Type"), body))
	}
	if want.bodyLacks != "" && strings.Contains(body, want.bodyLacks) {
		diffs = append(diffs, fmt.Sprintf("body repeats %q", want.bodyLacks))
	}
	if len(diffs) == 0 {
		return ""
	}
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return strings.Join(diffs, "; ") + "; body " + body
}
