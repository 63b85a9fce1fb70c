// Package kube holds what the render core, the judges of what it rendered
// and their callers share of Kubernetes' object model.
package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// An Object is a Kubernetes object: what controller-runtime's client.Object
// is, declared here instead. The composition function links render and
// observe, and controller-runtime's client would link client-go's clientset
// and every built-in API group's scheme with them: about 10 MiB of the
// function's memory, for nothing it calls.
type Object interface {
	metav1.Object
	runtime.Object
}
