//go:build tools

// Package tools pins Flux's source-controller for go build.
package tools

import _ "github.com/fluxcd/source-controller"
