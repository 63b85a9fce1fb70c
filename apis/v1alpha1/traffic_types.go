package v1alpha1

// Traffic routes a workload's requests between its latest Revision and
// Revisions pinned by name, and paces the rollout of a new latest Revision.
type Traffic struct {
	// Targets split requests between Revisions. Unset, the latest ready
	// Revision takes all of them. Pinning the Revision that serves now at
	// 100 before a change keeps it serving while the change rolls out
	// behind a tag; pinning an earlier one rolls back without a build.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.map(t, t.percent).sum() == 100",message="the targets' percents must sum to 100"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !has(a.tag) || self.filter(b, has(b.tag) && b.tag == a.tag).size() == 1)",message="each tag may name one target only"
	// +listType=atomic
	// +optional
	Targets []TrafficTarget `json:"targets,omitempty"`

	// RolloutDuration moves requests to a new latest Revision gradually
	// over this long, in whole seconds (Knative's rollout-duration),
	// instead of all at once when it is ready.
	// +optional
	RolloutDuration *RolloutDuration `json:"rolloutDuration,omitempty"`
}

// A TrafficTarget sends a percentage of requests to one Revision.
type TrafficTarget struct {
	// RevisionName pins a Revision of this workload, as status lists them
	// (latestReadyRevision, traffic). Unset, the target is the latest ready
	// Revision, whichever that is.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="must be a Revision name: lowercase letters, digits and '-', starting with a letter"
	// +optional
	RevisionName *string `json:"revisionName,omitempty"`

	// Percent of requests this target takes.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Percent int64 `json:"percent"`

	// Tag gives the target its own URL, <tag>-<name>.<namespace>.<domain>,
	// which reaches its Revision whatever its percent, so a Revision can be
	// tried at 0 percent before it takes traffic.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="size(self) <= 22 && self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="must be a DNS-1035 label of at most 22 characters: with '-' and the workload's name it makes the tag's host name"
	// +optional
	Tag *string `json:"tag,omitempty"`
}

// A RolloutDuration is a duration in whole seconds, such as 90s, 5m or
// 1h30m.
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:rule="size(self) > 0 && self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$')",message="must be a duration in whole seconds such as 90s, 5m or 1h30m"
type RolloutDuration string

// A TrafficObservation is what Knative reports of one traffic target: the
// Revision it resolved to, its share and, for a tag, its URL.
type TrafficObservation struct {
	// RevisionName that takes this share.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`

	// LatestRevision is true when the target follows the latest ready
	// Revision.
	// +optional
	LatestRevision bool `json:"latestRevision,omitempty"`

	// Percent of requests it takes.
	// +optional
	Percent int64 `json:"percent,omitempty"`

	// Tag of the target.
	// +optional
	Tag string `json:"tag,omitempty"`

	// URL that reaches this target alone, for a tagged one.
	// +optional
	URL string `json:"url,omitempty"`
}
