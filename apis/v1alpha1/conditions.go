package v1alpha1

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// Reasons a workload is not Ready. Managed resources carry them on their
// Ready condition, composite resources on Reconciling or Stalled.
// SourceUnresolved says the source as specified cannot be resolved (a ref or
// object that does not exist); SourceUnreachable that its server did not
// answer, which may pass. SecretMissing, ConfigMapMissing and BrokerMissing
// say the workload refers to a Secret, ConfigMap or Broker (or a key of one)
// that does not exist in its namespace, so it is not deployed (nor is a
// running one changed) until it does. NameConflict
// says an object the workload would write exists and is not its own, so
// nothing is applied until the name is free. RevisionFailed says Knative
// reports the latest Revision cannot serve; its message is Knative's.
// EventingFailed says Knative Eventing reports the workload's Broker or one
// of its Triggers cannot deliver; the message names which and why.
// RouteFailed says Knative cannot route requests as the spec says, such as to
// a pinned Revision that does not exist; the routes that served before still
// do. ForwardRefused says an agent's forward targets an agent of another
// namespace that does not accept it; the rest of the agent runs.
const (
	ReasonBuilding          xpv2.ConditionReason = "Building"
	ReasonBuildFailed       xpv2.ConditionReason = "BuildFailed"
	ReasonBuildNotAdmitted  xpv2.ConditionReason = "BuildNotAdmitted"
	ReasonDeploying         xpv2.ConditionReason = "Deploying"
	ReasonWaiting           xpv2.ConditionReason = "Waiting"
	ReasonInvalid           xpv2.ConditionReason = "InvalidSpec"
	ReasonSourceUnresolved  xpv2.ConditionReason = "SourceUnresolved"
	ReasonSourceUnreachable xpv2.ConditionReason = "SourceUnreachable"
	ReasonSecretMissing     xpv2.ConditionReason = "SecretMissing"
	ReasonConfigMapMissing  xpv2.ConditionReason = "ConfigMapMissing"
	ReasonBrokerMissing     xpv2.ConditionReason = "BrokerMissing"
	ReasonNameConflict      xpv2.ConditionReason = "NameConflict"
	ReasonRevisionFailed    xpv2.ConditionReason = "RevisionFailed"
	ReasonEventingFailed    xpv2.ConditionReason = "EventingFailed"
	ReasonRouteFailed       xpv2.ConditionReason = "RouteFailed"
	ReasonForwardRefused    xpv2.ConditionReason = "ForwardRefused"
)

// NeedsUser says whether a workload whose Ready condition has this reason
// waits for a user: nothing changes until its spec, its source or an object
// it refers to does. Every other reason passes with time: a build, Knative,
// a server that may answer again.
func NeedsUser(r xpv2.ConditionReason) bool {
	switch r {
	case ReasonBuildFailed, ReasonBuildNotAdmitted, ReasonInvalid, ReasonSourceUnresolved,
		ReasonSecretMissing, ReasonConfigMapMissing, ReasonBrokerMissing, ReasonNameConflict,
		ReasonRevisionFailed, ReasonEventingFailed, ReasonRouteFailed, ReasonForwardRefused:
		return true
	default:
		return false
	}
}

// TypeLatestRevisionReady is the condition that says whether the latest
// Revision Knative created serves. A workload gets it once a Revision has
// failed: while an older Revision still serves, the workload stays Ready and
// this condition names the failing one, until a Revision serves again.
const (
	TypeLatestRevisionReady xpv2.ConditionType   = "LatestRevisionReady"
	ReasonRevisionReady     xpv2.ConditionReason = "RevisionReady"
)
