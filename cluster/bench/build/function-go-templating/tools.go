//go:build tools

// Package tools pins function-go-templating for go build.
package tools

import _ "github.com/crossplane-contrib/function-go-templating"
