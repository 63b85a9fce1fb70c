//go:build tools

// Package tools pins function-patch-and-transform for go build.
package tools

import _ "github.com/crossplane-contrib/function-patch-and-transform"
