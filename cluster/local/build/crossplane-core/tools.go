//go:build tools

// Package tools pins Crossplane core for go build.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
