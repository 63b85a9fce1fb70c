package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"
)

// A PingSource sends an event to its sink on a cron schedule.
// +kubebuilder:object:root=true
type PingSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PingSourceSpec   `json:"spec,omitempty"`
	Status PingSourceStatus `json:"status,omitempty"`
}

// A PingSourceSpec is the schedule, its time zone, the event's data and
// where the event goes.
type PingSourceSpec struct {
	duckv1.SourceSpec `json:",inline"`
	Schedule          string `json:"schedule,omitempty"`
	Timezone          string `json:"timezone,omitempty"`
	ContentType       string `json:"contentType,omitempty"`
	Data              string `json:"data,omitempty"`
	DataBase64        string `json:"dataBase64,omitempty"`
}

// A PingSourceStatus is what Knative's pingsource reconciler reports:
// conditions and the sink it resolved.
type PingSourceStatus struct {
	duckv1.SourceStatus `json:",inline"`
}

// GetStatus is the PingSource's conditions and observed generation.
func (p *PingSource) GetStatus() *duckv1.Status { return &p.Status.Status }

// A PingSourceList is a list of PingSources.
// +kubebuilder:object:root=true
type PingSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PingSource `json:"items"`
}
