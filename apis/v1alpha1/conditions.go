package v1alpha1

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// Reasons a workload is not Ready. Managed resources carry them on their
// Ready condition, composite resources on Reconciling or Stalled.
// SourceUnresolved says the source as specified cannot be resolved (a ref or
// object that does not exist); SourceUnreachable that its server did not
// answer, which may pass.
const (
	ReasonBuilding          xpv2.ConditionReason = "Building"
	ReasonBuildFailed       xpv2.ConditionReason = "BuildFailed"
	ReasonBuildNotAdmitted  xpv2.ConditionReason = "BuildNotAdmitted"
	ReasonDeploying         xpv2.ConditionReason = "Deploying"
	ReasonWaiting           xpv2.ConditionReason = "Waiting"
	ReasonInvalid           xpv2.ConditionReason = "InvalidSpec"
	ReasonSourceUnresolved  xpv2.ConditionReason = "SourceUnresolved"
	ReasonSourceUnreachable xpv2.ConditionReason = "SourceUnreachable"
)
