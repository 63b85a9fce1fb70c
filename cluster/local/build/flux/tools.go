//go:build tools

// Package tools pins Flux's source-controller and kustomize-controller for
// go build.
package tools

import (
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
