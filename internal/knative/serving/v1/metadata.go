package v1

// The labels and annotations of Knative Serving that render writes or the
// provider reads; the package's test holds them to Knative's own keys.
const (
	// ServiceLabelKey names, on a Revision and its pods, the Service they
	// belong to.
	ServiceLabelKey = "serving.knative.dev/service"
	// RolloutDurationKey paces, on a Service, how long the latest Revision
	// takes to get all its traffic.
	RolloutDurationKey = "serving.knative.dev/rollout-duration"
	// VisibilityLabelKey, on a Service, sets where its Route is reachable
	// from.
	VisibilityLabelKey = "networking.knative.dev/visibility"
	// VisibilityClusterLocal is the visibility of a Service reachable only
	// from within its cluster.
	VisibilityClusterLocal = "cluster-local"
)
