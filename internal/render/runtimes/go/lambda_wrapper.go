// Command function serves a Go handler as a CloudEvents and plain HTTP
// endpoint.
//
// Added by provider-knative-lambda to a function's module, beside handle,
// which lambda_build.sh writes to call the handler the function's package
// exports:
//
//	func Handle(ctx context.Context, event map[string]any) (any, error)
//
// (Handle, or the name the runtime's handler gives).
//
// A body larger than LAMBDA_MAX_REQUEST_BYTES (6 MiB when unset) gets 413.
//
// A CloudEvent (a ce-specversion header, or a cloudevents content type)
// comes as a map of its attributes plus "data". What the handler returns is
// the data of the reply event, of type <type>.response with the request's
// id as subject; nil answers 202 without an event. A handler that fails gets
// an error event of type <type>.error and status 500, whose data does not
// repeat the error: it goes to the log. A CloudEvent that lacks a required
// attribute gets 400.
//
// Any other request, of any method and path but GET /health and /ready,
// comes as AWS Lambda's function URL event (payload format 2.0: rawPath,
// rawQueryString, headers, cookies, requestContext.http.method, body,
// isBase64Encoded), so a handler written for a Lambda function URL runs
// unchanged. A result whose JSON is an object with a statusCode is the
// response (headers, cookies, body, isBase64Encoded), as aws-lambda-go's
// events.LambdaFunctionURLResponse is; any other result is a 200 whose body
// is the result, a string as it is and anything else as JSON. A handler
// that fails gets 500 with a body that does not repeat the error.
//
// Every invocation writes one JSON line to stdout: its id, type, source,
// outcome (replied, accepted, failed, refused), status and duration. The
// handler logs through log/slog with the context it gets, as JSON lines with
// a level and the invocation's id, type and trace; LAMBDA_LOG_LEVEL (debug,
// info, warn, error; info when unset) drops the lower levels. The W3C trace
// context of the event (its traceparent extension, else the request's
// traceparent header) is carried to the reply: same trace, a span of its own.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	invalidType    = "dev.knative.lambda.invalid"
	defaultMaxBody = 6 << 20
	handlerFailed  = "the handler failed; the function's log says why"
)

// levels are the values of LAMBDA_LOG_LEVEL.
var levels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

func logLevel(raw string) (slog.Level, error) {
	if raw == "" {
		return slog.LevelInfo, nil
	}
	l, ok := levels[raw]
	if !ok {
		return 0, fmt.Errorf("LAMBDA_LOG_LEVEL must be debug, info, warn or error, got %q", raw)
	}
	return l, nil
}

// invocationKey keys the fields of the invocation a request's context
// serves.
type invocationKey struct{}

// An invocationHandler adds the fields of the invocation a record's context
// serves to every line: its id, type and trace.
type invocationHandler struct{ slog.Handler }

func (h invocationHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(invocationKey{}).([]slog.Attr); ok {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h invocationHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return invocationHandler{h.Handler.WithAttrs(as)}
}

func (h invocationHandler) WithGroup(name string) slog.Handler {
	return invocationHandler{h.Handler.WithGroup(name)}
}

// setupLogging makes slog, and the log package through it, write JSON lines
// with lower-case levels, as the other runtimes do.
func setupLogging(level slog.Level) {
	lower := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey {
			a.Value = slog.StringValue(strings.ToLower(a.Value.String()))
		}
		return a
	}
	slog.SetDefault(slog.New(invocationHandler{slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: level, ReplaceAttr: lower})}))
}

var traceparentPattern = regexp.MustCompile(`^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$`)

// A trace is the W3C trace context of one invocation: the caller's trace,
// or a new one, and a span of its own.
type trace struct{ traceID, spanID, flags, state string }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func traceOf(event map[string]any, h http.Header) trace {
	t := trace{flags: "00", spanID: randomHex(8)}
	parent, _ := event["traceparent"].(string)
	state, _ := event["tracestate"].(string)
	candidates := [][2]string{
		{parent, state},
		{h.Get("traceparent"), h.Get("tracestate")},
	}
	for _, c := range candidates {
		m := traceparentPattern.FindStringSubmatch(c[0])
		if m == nil || m[1] == "ff" || (m[1] == "00" && m[5] != "") || strings.Trim(m[2], "0") == "" || strings.Trim(m[3], "0") == "" {
			continue
		}
		t.traceID, t.flags, t.state = m[2], m[4], c[1]
		break
	}
	if t.traceID == "" {
		t.traceID = randomHex(16)
	}
	return t
}

func (t trace) traceparent() string {
	return "00-" + t.traceID + "-" + t.spanID + "-" + t.flags
}

func maxBody(raw string) (int64, error) {
	if raw == "" {
		return defaultMaxBody, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 || strings.TrimLeft(raw, "0123456789") != "" {
		return 0, fmt.Errorf("LAMBDA_MAX_REQUEST_BYTES must be a positive number of bytes, got %q", raw)
	}
	return n, nil
}

var required = []string{"specversion", "id", "source", "type"}

func source() string {
	if s := os.Getenv("LAMBDA_SOURCE"); s != "" {
		return s
	}
	if s := os.Getenv("K_SERVICE"); s != "" {
		return "/lambda/" + s
	}
	return "/lambda/local"
}

func decodeData(contentType string, body []byte) (any, error) {
	if len(body) == 0 {
		return nil, nil
	}
	media, _, _ := mime.ParseMediaType(contentType)
	switch {
	case media == "application/json" || strings.HasSuffix(media, "+json"):
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("data is not valid JSON: %w", err)
		}
		return v, nil
	case strings.HasPrefix(media, "text/") || media == "":
		return string(body), nil
	}
	return base64.StdEncoding.EncodeToString(body), nil
}

func parseEvent(r *http.Request, body []byte) (map[string]any, error) {
	contentType := r.Header.Get("Content-Type")
	if strings.HasPrefix(contentType, "application/cloudevents-batch+json") {
		return nil, errors.New("batched CloudEvents are not supported")
	}
	event := map[string]any{}
	if strings.HasPrefix(contentType, "application/cloudevents+json") {
		if err := json.Unmarshal(body, &event); err != nil || event == nil {
			return nil, fmt.Errorf("structured event is not a JSON object: %v", err)
		}
	} else {
		for k, v := range r.Header {
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "ce-") && len(v) > 0 {
				event[lk[3:]] = v[0]
			}
		}
		if contentType != "" {
			event["datacontenttype"] = contentType
		}
		data, err := decodeData(contentType, body)
		if err != nil {
			return nil, err
		}
		event["data"] = data
	}
	var missing []string
	for _, a := range required {
		if s, _ := event[a].(string); s == "" {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, errors.New("not a CloudEvent: missing " + strings.Join(missing, ", "))
	}
	return event, nil
}

func isCloudEvent(h http.Header) bool {
	return h.Get("ce-specversion") != "" || strings.HasPrefix(h.Get("Content-Type"), "application/cloudevents")
}

var (
	// textMedia are the media types whose bodies reach a handler as text;
	// others come in base64.
	textMedia = regexp.MustCompile(`^(text/.*|application/(json|xml|javascript|x-www-form-urlencoded)|.*\+(json|xml))$`)
	// What a response header's name and value may hold: a handler's header
	// must not end the header block or start another.
	headerName  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	headerValue = regexp.MustCompile(`^[^\x00-\x08\x0a-\x1f\x7f]*$`)
)

// framing are the headers the wrapper writes itself.
var framing = map[string]bool{"content-length": true, "transfer-encoding": true, "connection": true}

// httpEvent is the request as a Lambda function URL event, payload format
// 2.0: repeated headers joined by commas, cookies apart, and a body that is
// not text in base64.
func httpEvent(r *http.Request, body []byte, requestID string) map[string]any {
	headers := map[string]any{}
	var cookies []any
	for name, values := range r.Header {
		name = strings.ToLower(name)
		if name == "cookie" {
			for _, v := range values {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[name] = strings.Join(values, ",")
	}
	if r.Host != "" {
		headers["host"] = r.Host
	}
	now := time.Now().UTC()
	path := r.URL.EscapedPath()
	peer, _, _ := net.SplitHostPort(r.RemoteAddr)
	event := map[string]any{
		"version":        "2.0",
		"routeKey":       "$default",
		"rawPath":        path,
		"rawQueryString": r.URL.RawQuery,
		"headers":        headers,
		"requestContext": map[string]any{
			"http":      map[string]any{"method": r.Method, "path": path, "protocol": r.Proto, "sourceIp": peer, "userAgent": r.UserAgent()},
			"requestId": requestID,
			"routeKey":  "$default",
			"stage":     "$default",
			"time":      now.Format("02/Jan/2006:15:04:05 -0700"),
			"timeEpoch": now.UnixMilli(),
		},
		"isBase64Encoded": false,
	}
	if len(cookies) > 0 {
		event["cookies"] = cookies
	}
	if r.URL.RawQuery != "" {
		params := map[string]any{}
		// A query that does not parse keeps the pairs that do, as the
		// other runtimes do.
		values, _ := url.ParseQuery(r.URL.RawQuery)
		for k, vs := range values {
			params[k] = strings.Join(vs, ",")
		}
		event["queryStringParameters"] = params
	}
	if len(body) > 0 {
		event["body"], event["isBase64Encoded"] = httpBody(r.Header.Get("Content-Type"), body)
	}
	return event
}

// httpBody is a request's body as an event holds it: text of a text media
// type (or of none) in UTF-8, else base64; and whether it is base64.
func httpBody(contentType string, body []byte) (string, bool) {
	media := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	if (media == "" || textMedia.MatchString(media)) && utf8.Valid(body) {
		return string(body), false
	}
	return base64.StdEncoding.EncodeToString(body), true
}

// An httpResult is what a handler's result answers a plain request with.
type httpResult struct {
	status  int
	headers map[string]string
	cookies []string
	body    []byte
}

// httpResponse is the response a handler's result answers with, as a Lambda
// function URL reads it; an error when the result is no response.
func httpResponse(result any) (httpResult, error) {
	out := httpResult{status: http.StatusOK, headers: map[string]string{"content-type": "application/json"}}
	if s, ok := result.(string); ok {
		out.body = []byte(s)
		return out, nil
	}
	js, err := json.Marshal(result)
	if err != nil {
		return httpResult{}, err
	}
	// Only an object that names a statusCode can be a response: the
	// others are not parsed again to look.
	var fields map[string]json.RawMessage
	if js[0] != '{' || !bytes.Contains(js, []byte(`"statusCode"`)) || json.Unmarshal(js, &fields) != nil || fields["statusCode"] == nil {
		out.body = js
		return out, nil
	}
	var r struct {
		StatusCode      int             `json:"statusCode"`
		Headers         map[string]any  `json:"headers"`
		Cookies         []string        `json:"cookies"`
		Body            json.RawMessage `json:"body"`
		IsBase64Encoded bool            `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(js, &r); err != nil {
		return httpResult{}, fmt.Errorf("the result is no response: %w", err)
	}
	if r.StatusCode < 200 || r.StatusCode > 599 {
		return httpResult{}, fmt.Errorf("statusCode must be a number from 200 to 599, got %d", r.StatusCode)
	}
	out.status = r.StatusCode
	for name, raw := range r.Headers {
		value, ok := raw.(string)
		if !ok {
			b, err := json.Marshal(raw)
			if err != nil {
				return httpResult{}, fmt.Errorf("the header %q has a value JSON cannot write: %w", name, err)
			}
			value = string(b)
		}
		if !headerName.MatchString(name) || !headerValue.MatchString(value) {
			return httpResult{}, fmt.Errorf("the header %q is not a valid HTTP header", name)
		}
		if !framing[strings.ToLower(name)] {
			out.headers[strings.ToLower(name)] = value
		}
	}
	for _, c := range r.Cookies {
		if !headerValue.MatchString(c) {
			return httpResult{}, errors.New("cookies must be strings of one line")
		}
	}
	out.cookies = r.Cookies
	var text string
	switch {
	case len(r.Body) == 0 || string(r.Body) == "null":
	case json.Unmarshal(r.Body, &text) != nil:
		out.body = r.Body
	case r.IsBase64Encoded:
		if out.body, err = base64.StdEncoding.DecodeString(text); err != nil {
			return httpResult{}, fmt.Errorf("the body is not base64: %w", err)
		}
	default:
		out.body = []byte(text)
	}
	return out, nil
}

// serveHTTP calls the handler with the request as a function URL event,
// answers with its response and logs the invocation.
func serveHTTP(w http.ResponseWriter, r *http.Request, body []byte) {
	start := time.Now()
	requestID := randomUUID()
	t := traceOf(nil, r.Header)
	ctx := context.WithValue(r.Context(), invocationKey{}, []slog.Attr{
		slog.String("id", requestID), slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()),
		slog.String("traceId", t.traceID), slog.String("spanId", t.spanID),
	})
	level, outcome := slog.LevelInfo, "replied"
	result, err := call(ctx, httpEvent(r, body, requestID))
	var out httpResult
	if err == nil {
		out, err = httpResponse(result)
	}
	if err != nil {
		// As for an event, the failure's text goes to the log alone.
		slog.ErrorContext(ctx, "the handler failed", "error", err.Error())
		level, outcome = slog.LevelError, "failed"
		out = httpResult{status: http.StatusInternalServerError, headers: map[string]string{"content-type": "application/json"}, body: errorBody(handlerFailed)}
	}
	h := w.Header()
	for name, value := range out.headers {
		h.Set(name, value)
	}
	for _, c := range out.cookies {
		h.Add("Set-Cookie", c)
	}
	bodiless := out.status == http.StatusNoContent || out.status == http.StatusNotModified
	if !bodiless {
		h.Set("Content-Length", strconv.Itoa(len(out.body)))
	}
	w.WriteHeader(out.status)
	if !bodiless {
		_, _ = w.Write(out.body)
	}
	slog.Log(ctx, level, "invocation", "outcome", outcome, "status", out.status, "durationMs", float64(time.Since(start).Microseconds())/1000)
}

// errorBody is the data of an error event; its text is the wrapper's own.
func errorBody(msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": msg}) //nolint:errchkjson // A map of strings always encodes.
	return b
}

// randomUUID is a random UUID's text.
func randomUUID() string {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])
}

func reply(w http.ResponseWriter, status int, eventType, subject string, body []byte, t *trace) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("ce-specversion", "1.0")
	h.Set("ce-id", randomUUID())
	h.Set("ce-source", source())
	h.Set("ce-type", eventType)
	h.Set("ce-time", time.Now().UTC().Format(time.RFC3339Nano))
	if subject != "" {
		h.Set("ce-subject", subject)
	}
	if t != nil {
		h.Set("ce-traceparent", t.traceparent())
		if t.state != "" {
			h.Set("ce-tracestate", t.state)
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// refuse answers a request that is not an event this wrapper takes.
func refuse(ctx context.Context, w http.ResponseWriter, status int, msg string) {
	slog.WarnContext(ctx, "invocation", "outcome", "refused", "status", status, "reason", msg)
	reply(w, status, invalidType, "", errorBody(msg), nil)
}

// serve answers one request, reading at most limit bytes of its body.
func serve(w http.ResponseWriter, r *http.Request, limit int64) {
	if r.Method == http.MethodGet && (r.URL.Path == "/health" || r.URL.Path == "/ready") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
		return
	}
	start := time.Now()
	tooLarge := fmt.Sprintf("the request body is larger than %d bytes", limit)
	if r.ContentLength > limit {
		// Without it, net/http reads up to 256 KiB of the body it would
		// discard before it sends the reply.
		w.Header().Set("Connection", "close")
		refuse(r.Context(), w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		refuse(r.Context(), w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	if err != nil {
		refuse(r.Context(), w, http.StatusBadRequest, err.Error())
		return
	}
	if r.Method != http.MethodPost || !isCloudEvent(r.Header) {
		serveHTTP(w, r, body)
		return
	}
	event, err := parseEvent(r, body)
	if err != nil {
		refuse(r.Context(), w, http.StatusBadRequest, err.Error())
		return
	}
	eventType, id := identity(event)
	t := traceOf(event, r.Header)
	ctx := context.WithValue(r.Context(), invocationKey{}, []slog.Attr{
		slog.String("id", id), slog.String("type", eventType), slog.Any("source", event["source"]),
		slog.String("traceId", t.traceID), slog.String("spanId", t.spanID),
	})
	status := invoke(ctx, w, event, &t)
	level, outcome := slog.LevelInfo, map[int]string{http.StatusOK: "replied", http.StatusAccepted: "accepted"}[status]
	if outcome == "" {
		level, outcome = slog.LevelError, "failed"
	}
	slog.Log(ctx, level, "invocation", "outcome", outcome, "status", status, "durationMs", float64(time.Since(start).Microseconds())/1000)
}

// invoke calls the handler and replies; it returns the reply's status.
func invoke(ctx context.Context, w http.ResponseWriter, event map[string]any, t *trace) int {
	eventType, id := identity(event)
	result, err := call(ctx, event)
	if err == nil && result == nil {
		// Nothing to say: no event, so the Broker ingests none.
		w.WriteHeader(http.StatusAccepted)
		return http.StatusAccepted
	}
	var body []byte
	if err == nil {
		body, err = json.Marshal(result)
	}
	if err != nil {
		// A failure's text may hold secrets: only the log sees it.
		slog.ErrorContext(ctx, "the handler failed", "error", err.Error())
		reply(w, http.StatusInternalServerError, eventType+".error", id, errorBody(handlerFailed), t)
		return http.StatusInternalServerError
	}
	reply(w, http.StatusOK, eventType+".response", id, body, t)
	return http.StatusOK
}

// call runs the handler and turns a panic into an error, as other runtimes
// turn an exception into an error event.
func call(ctx context.Context, event map[string]any) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return handle(ctx, event)
}

// fail ends the wrapper with what stopped it.
func fail(err error) {
	slog.Error("the wrapper stopped", "error", err.Error())
	os.Exit(1)
}

// identity is an event's type and id, which parseEvent requires.
func identity(event map[string]any) (eventType, id string) {
	eventType, _ = event["type"].(string)
	id, _ = event["id"].(string)
	return eventType, id
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	level, err := logLevel(os.Getenv("LAMBDA_LOG_LEVEL"))
	if err != nil {
		fail(err)
	}
	setupLogging(level)
	limit, err := maxBody(os.Getenv("LAMBDA_MAX_REQUEST_BYTES"))
	if err != nil {
		fail(err)
	}
	handler := func(w http.ResponseWriter, r *http.Request) { serve(w, r, limit) }
	srv := &http.Server{Addr: ":" + port, Handler: http.HandlerFunc(handler), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	slog.Info("listening", "port", port)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail(err)
	}
	// ListenAndServe returns as soon as Shutdown starts; in-flight requests
	// finish before the process exits.
	<-drained
}
