//go:build tools

// Package tools pins provider-kubernetes for go build.
package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
