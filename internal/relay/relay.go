// Package relay is the protocol between render and the relay an agent's
// forwards deliver through (cmd/relay).
//
// Knative's Brokers drop their own loop counter (knativebrokerttl) before
// they deliver an event, so an event forwarded from one Broker into another
// starts afresh there. Forwards that go round through several namespaces,
// each with the consent of the next, would deliver an event without end,
// and twice as often at each pass where two forwards match it. A relay
// stands between an agent's forward Triggers and their targets: it adds one
// to the event's hop count, and drops the event once the count reaches the
// limit, so no cycle outlives it however many namespaces it crosses.
package relay

// ExtensionHops is the CloudEvents extension that counts how many forwards
// an event has passed through.
const ExtensionHops = "lambdahops"

// PathPrefix starts the path of each forward: /forward/<name>.
const PathPrefix = "/forward/"

// The relay's environment.
const (
	// EnvTargets is a JSON object of forward names to Broker addresses.
	EnvTargets = "RELAY_TARGETS"
	// EnvMaxHops is the most forwards an event passes through.
	EnvMaxHops = "RELAY_MAX_HOPS"
)
