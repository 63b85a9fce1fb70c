package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"
)

// A Revision is one immutable version of a Service's code and settings.
// +kubebuilder:object:root=true
type Revision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RevisionSpec   `json:"spec,omitempty"`
	Status RevisionStatus `json:"status,omitempty"`
}

// A RevisionTemplateSpec is the metadata and spec of the Revisions a
// Configuration makes.
type RevisionTemplateSpec struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RevisionSpec `json:"spec,omitempty"`
}

// A RevisionSpec is a Revision's pods and how many requests each serves at
// once, and for how long.
type RevisionSpec struct {
	corev1.PodSpec `json:",inline"`

	ContainerConcurrency        *int64 `json:"containerConcurrency,omitempty"`
	TimeoutSeconds              *int64 `json:"timeoutSeconds,omitempty"`
	ResponseStartTimeoutSeconds *int64 `json:"responseStartTimeoutSeconds,omitempty"`
	IdleTimeoutSeconds          *int64 `json:"idleTimeoutSeconds,omitempty"`
}

// A RevisionStatus is what Knative's revision reconciler reports:
// conditions, its containers' image digests and its replicas.
type RevisionStatus struct {
	duckv1.Status `json:",inline"`

	LogURL                string            `json:"logUrl,omitempty"`
	ContainerStatuses     []ContainerStatus `json:"containerStatuses,omitempty"`
	InitContainerStatuses []ContainerStatus `json:"initContainerStatuses,omitempty"`
	ActualReplicas        *int32            `json:"actualReplicas,omitempty"`
	DesiredReplicas       *int32            `json:"desiredReplicas,omitempty"`
}

// A ContainerStatus is the digest a container's image resolved to.
type ContainerStatus struct {
	Name        string `json:"name,omitempty"`
	ImageDigest string `json:"imageDigest,omitempty"`
}

// GetStatus is the Revision's conditions and observed generation.
func (r *Revision) GetStatus() *duckv1.Status { return &r.Status.Status }

// A RevisionList is a list of Revisions.
// +kubebuilder:object:root=true
type RevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Revision `json:"items"`
}
