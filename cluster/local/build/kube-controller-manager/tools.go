//go:build tools

// Package tools pins the kube-controller-manager command for go build. The
// end-to-end tests run only its garbage collector, which finishes the
// deletions Crossplane starts.
package tools

import _ "k8s.io/kubernetes/cmd/kube-controller-manager"
