//go:build tools

// Package tools pins the kube-apiserver command for go build.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
