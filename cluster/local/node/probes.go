package node

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The patience of the node's system components' probes. Knative's probe
// every one to three seconds with a one-second timeout and kill after three
// misses: on CI's two cores, with builds and a test run beside them, the
// kubelet killed the in-memory channel's dispatcher and Eventing's webhook,
// which then refused connections for minutes of its 300 s lame duck, and
// every test that created a Trigger or a PingSource failed. A component
// that is slow, not stuck, is left running.
const (
	probeTimeoutSeconds      = 5
	livenessFailureThreshold = 10
)

// patient gives the probes of the containers of objs' Deployments at least
// probeTimeoutSeconds to answer, and their liveness probes at least
// livenessFailureThreshold misses before the kubelet kills the container.
func patient(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	return eachContainer(objs, func(c map[string]any) {
		atLeast(c, probeTimeoutSeconds, "readinessProbe", "timeoutSeconds")
		atLeast(c, probeTimeoutSeconds, "livenessProbe", "timeoutSeconds")
		atLeast(c, livenessFailureThreshold, "livenessProbe", "failureThreshold")
	})
}

// atLeast raises the number of a probe's field to least, if the container
// has that probe.
func atLeast(container map[string]any, least int64, probe, field string) {
	p, ok := container[probe].(map[string]any)
	if !ok {
		return
	}
	if v, _, _ := unstructured.NestedInt64(p, field); v < least {
		p[field] = least
	}
}
