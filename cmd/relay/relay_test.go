package main

import (
	"cmp"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// A got is what a target Broker received.
type got struct {
	Hops, Type, ID, ContentType, Body string
}

// TestRelay checks what a relay sends on, and what it drops, as a target
// Broker's ingress receives it.
func TestRelay(t *testing.T) {
	const binary, structured = "binary", "structured"
	type request struct {
		path, method, mode, hops, body string
	}
	type want struct {
		status   int
		received []got
	}
	cases := map[string]struct {
		reason string
		target int
		req    request
		want   want
	}{
		"FirstHop": {
			reason: "An event that never passed a forward leaves with a count of one, its attributes and data as they were.",
			req:    request{path: "/forward/f", mode: binary, body: `{"a":1}`},
			want:   want{status: http.StatusAccepted, received: []got{{Hops: "1", Type: "t", ID: "1", ContentType: "application/json", Body: `{"a":1}`}}},
		},
		"Counted": {
			reason: "A counted event leaves with one more.",
			req:    request{path: "/forward/f", mode: binary, hops: "3", body: `{}`},
			want:   want{status: http.StatusAccepted, received: []got{{Hops: "4", Type: "t", ID: "1", ContentType: "application/json", Body: `{}`}}},
		},
		"Structured": {
			reason: "A structured event is counted as a binary one is.",
			req:    request{path: "/forward/f", mode: structured, hops: "2", body: `{"a":1}`},
			want:   want{status: http.StatusAccepted, received: []got{{Hops: "3", Type: "t", ID: "1", ContentType: "application/json", Body: `{"a":1}`}}},
		},
		"AtTheLimit": {
			reason: "An event that passed as many forwards as allowed goes no further, and the Trigger is not asked to retry it.",
			req:    request{path: "/forward/f", mode: binary, hops: "8", body: `{}`},
			want:   want{status: http.StatusOK},
		},
		"StructuredAtTheLimit": {
			reason: "The limit holds for a structured event.",
			req:    request{path: "/forward/f", mode: structured, hops: "9", body: `{}`},
			want:   want{status: http.StatusOK},
		},
		"Forged": {
			reason: "A count the relay could not have written is spent, so no one can restart a cycle's count by setting it.",
			req:    request{path: "/forward/f", mode: binary, hops: "-1", body: `{}`},
			want:   want{status: http.StatusOK},
		},
		"NotACount": {
			reason: "A count that is not a number is spent.",
			req:    request{path: "/forward/f", mode: binary, hops: "many", body: `{}`},
			want:   want{status: http.StatusOK},
		},
		"TargetRefuses": {
			reason: "The target's refusal reaches the Trigger, which retries or dead-letters the event.",
			target: http.StatusServiceUnavailable,
			req:    request{path: "/forward/f", mode: binary, body: `{}`},
			want:   want{status: http.StatusServiceUnavailable, received: []got{{Hops: "1", Type: "t", ID: "1", ContentType: "application/json", Body: `{}`}}},
		},
		"UnknownForward": {
			reason: "Only the forwards the relay was made with have a target.",
			req:    request{path: "/forward/other", mode: binary, body: `{}`},
			want:   want{status: http.StatusNotFound},
		},
		"NotAForward": {
			reason: "A path outside the forwards' has no target.",
			req:    request{path: "/f", mode: binary, body: `{}`},
			want:   want{status: http.StatusNotFound},
		},
		"NotPosted": {
			reason: "Only a POST carries an event.",
			req:    request{path: "/forward/f", method: http.MethodGet, mode: binary},
			want:   want{status: http.StatusNotFound},
		},
		"NotAnEvent": {
			reason: "A request without CloudEvents attributes is refused.",
			req:    request{path: "/forward/f", body: `{}`},
			want:   want{status: http.StatusBadRequest},
		},
		"TooLarge": {
			reason: "An event over the relay's limit is refused, not read whole.",
			req:    request{path: "/forward/f", mode: binary, body: `"` + strings.Repeat("a", MaxBody) + `"`},
			want:   want{status: http.StatusBadRequest},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var received []got
			broker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				received = append(received, got{Hops: r.Header.Get("Ce-Lambdahops"), Type: r.Header.Get("Ce-Type"), ID: r.Header.Get("Ce-Id"), ContentType: r.Header.Get("Content-Type"), Body: string(b)})
				w.WriteHeader(max(tc.target, http.StatusAccepted))
			}))
			defer broker.Close()
			r := Relay{Targets: map[string]string{"f": broker.URL}, MaxHops: 8, Client: broker.Client(), Log: slog.New(slog.DiscardHandler)}

			req := httptest.NewRequestWithContext(t.Context(), cmp.Or(tc.req.method, http.MethodPost), tc.req.path, strings.NewReader(tc.req.body))
			switch tc.req.mode {
			case binary:
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Ce-Specversion", "1.0")
				req.Header.Set("Ce-Id", "1")
				req.Header.Set("Ce-Type", "t")
				req.Header.Set("Ce-Source", "/s")
				if tc.req.hops != "" {
					req.Header.Set("Ce-Lambdahops", tc.req.hops)
				}
			case structured:
				req.Header.Set("Content-Type", "application/cloudevents+json")
				req.Body = io.NopCloser(strings.NewReader(`{"specversion":"1.0","id":"1","type":"t","source":"/s","lambdahops":"` + tc.req.hops + `","datacontenttype":"application/json","data":` + tc.req.body + `}`))
			}
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)

			if diff := gocmp.Diff(tc.want, want{status: w.Code, received: received}, gocmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nServeHTTP(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestHops checks which values count.
func TestHops(t *testing.T) {
	cases := map[string]struct {
		reason string
		v      any
		want   int32
		err    bool
	}{
		"Absent":   {reason: "An event without a count passed no forward.", v: nil, want: 0},
		"String":   {reason: "Counts arrive as strings over HTTP.", v: "5", want: 5},
		"Integer":  {reason: "A count set in this process is an integer.", v: int32(7), want: 7},
		"Negative": {reason: "No relay writes a negative count.", v: "-2", err: true},
		"Text":     {reason: "Text is not a count.", v: "x", err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Hops(tc.v)
			if diff := gocmp.Diff(tc.want, got); diff != "" || (err != nil) != tc.err {
				t.Errorf("%s\nHops(%v): -want, +got:\n%s\nerror: %v", tc.reason, tc.v, diff, err)
			}
		})
	}
}
