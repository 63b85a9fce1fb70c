//go:build tools

// Package tools pins the Kaniko executor for go build.
package tools

import _ "github.com/GoogleContainerTools/kaniko/cmd/executor"
