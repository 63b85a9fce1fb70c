package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Phase summarises where a workload is in its lifecycle.
// +kubebuilder:validation:Enum=Pending;Building;Deploying;Ready;Failed
type Phase string

// Phases.
const (
	PhasePending   Phase = "Pending"
	PhaseBuilding  Phase = "Building"
	PhaseDeploying Phase = "Deploying"
	PhaseReady     Phase = "Ready"
	PhaseFailed    Phase = "Failed"
)

// WorkloadObservation is what the provider observed of the Knative workload.
type WorkloadObservation struct {
	// Phase of the workload.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// Image the Knative Service runs, by digest where known.
	// +optional
	Image string `json:"image,omitempty"`

	// URL of the Knative Service.
	// +optional
	URL string `json:"url,omitempty"`

	// LatestReadyRevision of the Knative Service.
	// +optional
	LatestReadyRevision string `json:"latestReadyRevision,omitempty"`

	// FailedRevision is the latest Revision Knative created when it cannot
	// serve; the Ready or LatestRevisionReady condition says why.
	// +optional
	FailedRevision string `json:"failedRevision,omitempty"`

	// Traffic is how Knative routes requests between Revisions: each
	// target with the Revision it resolved to, its percent and, when
	// tagged, its own URL.
	// +optional
	Traffic []TrafficObservation `json:"traffic,omitempty"`

	// Eventing are the Broker and Triggers of the workload.
	// +optional
	Eventing *EventingObservation `json:"eventing,omitempty"`
}

// BuildObservation is what the provider observed of an image build.
type BuildObservation struct {
	// Identity of the build: a hash of the source identity, the runtime and
	// the build settings. The same identity is never built twice.
	// +optional
	Identity string `json:"identity,omitempty"`

	// JobName of the Kaniko Job.
	// +optional
	JobName string `json:"jobName,omitempty"`

	// Digest of the image the build pushed, once it succeeded.
	// +optional
	Digest string `json:"digest,omitempty"`

	// StartedAt is when the Job started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// CompletedAt is when the build succeeded: Kaniko's exit with the
	// image's digest, or the Job's completion.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Message is the outcome of the build, or why it failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// EventingObservation is what the provider observed of the eventing objects.
type EventingObservation struct {
	// Broker the workload is subscribed to.
	// +optional
	Broker string `json:"broker,omitempty"`

	// CreatedBrokers are the Brokers the workload has yet to leave: the
	// one its spec creates and, until it is gone or another workload
	// creates it or listens on it, one it created or listened on before.
	// +optional
	CreatedBrokers []string `json:"createdBrokers,omitempty"`

	// Triggers of the workload.
	// +optional
	Triggers []string `json:"triggers,omitempty"`

	// Schedules are the PingSources that invoke the workload.
	// +optional
	Schedules []string `json:"schedules,omitempty"`
}
