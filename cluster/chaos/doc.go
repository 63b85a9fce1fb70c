// Package chaos holds the test that takes the provider, as its own process
// against a local control plane, through faults: LambdaFunctions converge
// while the provider is killed and restarted and kube-apiserver and etcd
// restart, then are deleted while it is killed again. The test plays the Job
// controller and Knative, counts every build Job ever created, and checks
// that nothing is left stuck, duplicated or orphaned. Its flags set the
// size: go test runs a small one, make chaos the full one.
package chaos
