package render

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// Key names a rendered object among a workload's: its kind and name. The
// provider finds an object's live copy by it, and the function names the
// composed resource with it. A build Job is named for its build identity, so
// a new build has a new key.
func Key(o kube.Object) string {
	return string(AppendKey(nil, o))
}

// AppendKey appends the Key of o to b.
func AppendKey(b []byte, o kube.Object) []byte {
	return append(append(append(b, o.GetObjectKind().GroupVersionKind().Kind...), '/'), o.GetName()...)
}

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

// Containers render names: the workload's, and the build's fetch (an init
// container) and Kaniko.
const (
	ContainerFunction = "function"
	ContainerAgent    = "agent"
	ContainerFetch    = "fetch"
	ContainerKaniko   = "kaniko"
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

// triggerHashLen is how many hex digits of a hash end a Trigger's name.
const triggerHashLen = 8

// maxNameLen is the longest name of an object render makes.
const maxNameLen = 63

// TriggerName names one Trigger of a resource. Its readable part joins the
// resource's name and the Trigger's with '-', which alone would collide:
// function a's trigger b-c and function a-b's trigger c, an agent's
// subscription f-0 and its forward f's first type, a function and an agent
// of one name. So it ends with a hash of the resource's kind and name and of
// the Trigger's key, which is unique among the resource's Triggers.
func TriggerName(kind, name, trigger, key string) string {
	h := sha256.Sum256([]byte(kind + "\x00" + name + "\x00" + key))
	readable := name + "-" + trigger
	if max := maxNameLen - 1 - triggerHashLen; len(readable) > max {
		readable = strings.TrimRight(readable[:max], "-")
	}
	return readable + "-" + hex.EncodeToString(h[:])[:triggerHashLen]
}
