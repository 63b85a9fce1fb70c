// Package render is the one place that turns a LambdaFunction or LambdaAgent
// spec into the desired Kubernetes objects: the Knative Service, Broker and
// Triggers, and the Kaniko build Job with its build-context ConfigMap.
//
// It is pure: no clients, no I/O, no clock. Everything it needs from the
// cluster (a git commit, an image digest, a Broker's address) arrives as
// Observed facts. The provider's external client and the composition function
// both call it, and neither edits what it returns.
//
// The function links it and talks only gRPC, so render links no Kubernetes
// client: it returns kube.Objects, and wraps errors with function-sdk-go's
// errors package, crossplane-runtime's without controller-runtime.
package render
