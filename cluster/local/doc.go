// Package local runs a local Kubernetes control plane, a real etcd and
// kube-apiserver on loopback, with every CRD the provider and its tests need:
// our own, Knative Serving and Eventing's, and Crossplane's. `make run`, the
// integration tests and the benchmarks all use it.
//
// No controller-manager runs, so nothing reconciles Jobs, Knative Services or
// Brokers: tests play those controllers by writing status as they would.
package local
