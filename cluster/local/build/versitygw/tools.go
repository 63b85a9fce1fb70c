//go:build tools

// Package tools pins the Versity S3 gateway for go build.
package tools

import _ "github.com/versity/versitygw/cmd/versitygw"
