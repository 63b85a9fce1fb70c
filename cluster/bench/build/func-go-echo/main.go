// Command func-go-echo serves, on Knative Functions' Go runtime, a handler
// that echoes a request's body, as func's Go http template shapes one.
package main

import (
	"io"
	"net/http"

	fhttp "knative.dev/func-go/http"
)

// An echo answers with the request's body.
type echo struct{}

// Handle echoes the body.
func (echo) Handle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.Copy(w, r.Body)
}

func main() {
	if err := fhttp.Start(echo{}); err != nil {
		panic(err)
	}
}
