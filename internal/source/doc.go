// Package source resolves where a function's code is to a content identity,
// without building it: a git ref to the commit it names.
//
// The composition function links it, so its errors are wrapped with
// function-sdk-go's errors package, crossplane-runtime's without
// controller-runtime, as render's are.
package source
