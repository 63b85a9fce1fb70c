//go:build tools

// Package tools pins the Crossplane CLI for go build.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
