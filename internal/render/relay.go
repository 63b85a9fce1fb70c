package render

import (
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/relay"
)

// The relay an agent's forwards deliver through (cmd/relay).
const (
	// DefaultRelayImage is the relay of this release.
	DefaultRelayImage = "xpkg.crossplane.io/knative-lambda/relay-knative-lambda:v0.1.0"

	// DefaultMaxForwardHops is how many forwards an event passes through
	// at most when the provider config says nothing.
	DefaultMaxForwardHops int32 = 8

	// ContainerRelay is the relay's container.
	ContainerRelay = "relay"

	// ComponentRelay is the relay's LabelComponent.
	ComponentRelay = "relay"

	// relayPort is where the relay listens.
	relayPort int32 = 8080
)

// ExtensionHops is the CloudEvents extension relays count forwards in.
const ExtensionHops = relay.ExtensionHops

// RelayName names the Knative Service of an agent's relay as a Trigger of
// the agent would be named: a hash of the agent and a key no Trigger has
// ends it, so it is no other object's name by chance.
func RelayName(name string) string {
	return TriggerName(v1alpha1.LambdaAgentKind, name, ComponentRelay, ComponentRelay)
}

// ServiceNames are the names of the Knative Services a resource of kind
// may own: its own, and an agent's relay.
func ServiceNames(kind, name string) []string {
	if kind == v1alpha1.LambdaAgentKind {
		return []string{name, RelayName(name)}
	}
	return []string{name}
}

// relayed is what render knows of an agent's relay.
type relayed struct {
	namespace, name string
	targets         map[string]string
	d               Defaults
}

// subscriber addresses one forward's path of the relay.
func (r relayed) subscriber(forward string) duckv1.Destination {
	return duckv1.Destination{
		Ref: &duckv1.KReference{APIVersion: servingAPIVersion, Kind: "Service", Name: RelayName(r.name)},
		URI: &apis.URL{Path: relay.PathPrefix + forward},
	}
}

// maxHops are the forwards an event may pass through under d.
func maxHops(d Defaults) int32 {
	if d.MaxForwardHops > 0 {
		return d.MaxForwardHops
	}
	return DefaultMaxForwardHops
}

// service renders the relay: reachable in the cluster only, since anyone
// who reached it could put events into the forwards' Brokers, and scaled
// to zero between events. Its targets are in its environment, so a
// Broker's new address rolls a new revision.
func (r relayed) service() *servingv1.Service {
	targets, _ := json.Marshal(r.targets) //nolint:errchkjson // A map of strings always encodes.
	return workload{
		kind: v1alpha1.LambdaAgentKind, namespace: r.namespace, name: RelayName(r.name), resource: r.name, component: ComponentRelay,
		container: ContainerRelay, image: orDefault(r.d.RelayImage, DefaultRelayImage), port: relayPort,
		readiness: openPort(relayPort),
		env: []corev1.EnvVar{
			{Name: relay.EnvTargets, Value: string(targets)},
			{Name: relay.EnvMaxHops, Value: strconv.Itoa(int(maxHops(r.d)))},
		},
		pullSecrets: r.d.PullSecrets,
		meta:        &v1alpha1.WorkloadSettings{Visibility: ptr.To(v1alpha1.VisibilityClusterLocal)},
	}.service()
}
