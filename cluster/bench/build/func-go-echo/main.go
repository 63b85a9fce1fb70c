// Command func-go-echo serves, on Knative Functions' Go runtime, a handler
// that echoes a request's JSON body, as func's Go http template shapes one.
package main

import (
	"encoding/json"
	"net/http"

	fhttp "knative.dev/func-go/http"
)

// An echo answers with the request's body.
type echo struct{}

// Handle decodes the body as JSON and answers with the value, as the
// other contenders' handlers do.
func (echo) Handle(w http.ResponseWriter, r *http.Request) {
	var v any
	if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	if err := fhttp.Start(echo{}); err != nil {
		panic(err)
	}
}
