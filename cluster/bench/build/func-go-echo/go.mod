// The echo handler on Knative Functions' Go runtime, func-go, for
// runtimebench: a peer of our Go wrapper.
module github.com/knative-lambda/provider-knative-lambda/cluster/bench/build/func-go-echo

go 1.25

require knative.dev/func-go v0.21.3

require (
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/rs/zerolog v1.32.0 // indirect
	golang.org/x/sys v0.18.0 // indirect
)
