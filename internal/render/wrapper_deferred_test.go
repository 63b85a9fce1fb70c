package render

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// sslHandler says whether importlib finds ssl and whether ssl was still to
// be imported when it was called, then uses it as a client library does.
const sslHandler = `import importlib.util
import sys


def handler(event, context):
    found = importlib.util.find_spec("ssl") is not None
    deferred = type(sys.modules.get("ssl")).__name__ == "DeferredModule"
    import ssl
    return {"found": found, "deferred": deferred, "protocol": ssl.create_default_context().protocol.name}
`

// An sslAnswer is what sslHandler answers.
type sslAnswer struct {
	Found    bool   `json:"found"`
	Deferred bool   `json:"deferred"`
	Protocol string `json:"protocol"`
}

// TestPythonWrapperDefersSSL checks that the Python wrapper starts without
// loading OpenSSL, which http.server's import of http.client pulled in,
// and that a handler still gets the whole ssl module: the first alone, and
// eight at once, each the first of its wrapper to use it.
func TestPythonWrapperDefersSSL(t *testing.T) {
	p := newProgramOf(t, v1alpha1.LanguagePython, sslHandler, "")
	ask := func(w *runningWrapper) (sslAnswer, error) {
		r, err := http.Get(w.base + "/") //nolint:noctx // The wrapper answers at once.
		if err != nil {
			return sslAnswer{}, err
		}
		defer r.Body.Close() //nolint:errcheck // Read to the end.
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return sslAnswer{}, err
		}
		var a sslAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			return sslAnswer{}, err
		}
		return a, nil
	}
	t.Run("First", func(t *testing.T) {
		w := p.start(t)
		got, err := ask(w)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sslAnswer{Found: true, Deferred: true, Protocol: "PROTOCOL_TLS_CLIENT"}, got); diff != "" {
			t.Errorf("the first invocation: -want, +got:\n%s", diff)
		}
	})
	t.Run("AtOnce", func(t *testing.T) {
		w := p.start(t)
		var wg sync.WaitGroup
		answers, errs := make([]sslAnswer, 8), make([]error, 8)
		for i := range answers {
			wg.Go(func() { answers[i], errs[i] = ask(w) })
		}
		wg.Wait()
		for i := range answers {
			if errs[i] != nil || answers[i].Protocol != "PROTOCOL_TLS_CLIENT" {
				t.Errorf("invocation %d of 8 at once: %+v (%v); want ssl's client protocol", i, answers[i], errs[i])
			}
		}
	})
}
