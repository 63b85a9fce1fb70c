// Package observe reads what the controllers of rendered objects report:
// the outcome of a build Job, the address of a Broker, the readiness of a
// Knative Service. Like render it is pure, so the provider, which reads the
// objects from a cluster, and the composition function, which is handed
// them by Crossplane, draw the same conclusions from the same objects.
package observe
