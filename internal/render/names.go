package render

import (
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// Labels render puts on every object, so a resource's objects can be listed
// and told apart from anything else in the namespace.
const (
	LabelManagedBy     = "app.kubernetes.io/managed-by"
	LabelName          = "app.kubernetes.io/name"
	LabelComponent     = "app.kubernetes.io/component"
	LabelKind          = v1alpha1.Group + "/kind"
	LabelResource      = v1alpha1.Group + "/name"
	LabelBuildIdentity = v1alpha1.Group + "/build-identity"

	// ManagedBy is the value of LabelManagedBy.
	ManagedBy = "provider-knative-lambda"
)

// Components, the values of LabelComponent.
const (
	ComponentWorkload = "workload"
	ComponentBuild    = "build"
	ComponentEventing = "eventing"
)

// identityPrefixLen is how much of a build identity names a Job and tags an
// image: 12 hex digits, 48 bits, make a collision between two builds of one
// resource vanishingly unlikely while keeping names within 63 characters.
const identityPrefixLen = 12

// labels are the selection labels of one of a resource's objects.
func labels(kind, name, component string) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelName:      name,
		LabelComponent: component,
		LabelKind:      kind,
		LabelResource:  name,
	}
}

// BuildName names the Job and ConfigMap of one build: deterministic, so a
// restarted provider finds the build it started instead of starting another.
func BuildName(name, identity string) string {
	return name + "-build-" + identity[:identityPrefixLen]
}

// TriggerName names the Trigger of a function trigger or agent subscription.
func TriggerName(name, trigger string) string {
	return name + "-" + trigger
}
