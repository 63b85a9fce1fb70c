//go:build tools

// Package tools pins the runtime interface emulator for gobuild.sh.
package tools

import _ "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
