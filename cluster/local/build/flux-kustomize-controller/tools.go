//go:build tools

// Package tools pins Flux's kustomize-controller for go build.
package tools

import _ "github.com/fluxcd/kustomize-controller"
