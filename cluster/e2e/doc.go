// Package e2e runs Crossplane itself, the composition function and the
// provider as processes against the local control plane, and drives claims
// and composite resources to running Knative workloads. Its tests build with
// the e2e tag: make e2e.
package e2e
