// Module function-patch-and-transform builds a peer that the function
// benchmark measures ours against. Nothing of its code is kept here: go build
// fetches the release from the module proxy and then writes go.sum, which git
// ignores. The proxy of the machine this was written on refuses every
// release's zip; there make peers says so and the benchmark leaves it out.
module github.com/knative-lambda/provider-knative-lambda/cluster/bench/build/function-patch-and-transform

go 1.26.0

require github.com/crossplane-contrib/function-patch-and-transform v0.9.0
