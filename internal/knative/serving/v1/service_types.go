package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
)

// The conditions Knative's service reconciler reports.
const (
	// ServiceConditionRoutesReady is true once the Service's Route serves
	// its traffic.
	ServiceConditionRoutesReady apis.ConditionType = "RoutesReady"
	// ServiceConditionConfigurationsReady is true once the latest Revision
	// of the Service's Configuration is ready.
	ServiceConditionConfigurationsReady apis.ConditionType = "ConfigurationsReady"
)

// A Service runs a container as Revisions, scaled by requests, and routes
// its URL's traffic to them.
// +kubebuilder:object:root=true
type Service struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ServiceSpec   `json:"spec,omitempty"`
	Status ServiceStatus `json:"status,omitempty"`
}

// A ServiceSpec is the template of the Service's Revisions and how its
// traffic is split between them.
type ServiceSpec struct {
	ConfigurationSpec `json:",inline"`
	RouteSpec         `json:",inline"`
}

// A ConfigurationSpec is the template each new Revision is made from.
type ConfigurationSpec struct {
	Template RevisionTemplateSpec `json:"template"`
}

// A RouteSpec splits traffic between Revisions.
type RouteSpec struct {
	Traffic []TrafficTarget `json:"traffic,omitempty"`
}

// A TrafficTarget sends a share of the traffic to a Revision, or to the
// latest ready one, optionally under a tag of its own.
type TrafficTarget struct {
	Tag               string    `json:"tag,omitempty"`
	RevisionName      string    `json:"revisionName,omitempty"`
	ConfigurationName string    `json:"configurationName,omitempty"`
	LatestRevision    *bool     `json:"latestRevision,omitempty"`
	Percent           *int64    `json:"percent,omitempty"`
	URL               *apis.URL `json:"url,omitempty"`
}

// A ServiceStatus is what Knative's service reconciler reports: conditions,
// the latest Revisions, the URL and the traffic as it is served.
type ServiceStatus struct {
	duckv1.Status             `json:",inline"`
	ConfigurationStatusFields `json:",inline"`
	RouteStatusFields         `json:",inline"`
}

// ConfigurationStatusFields name the latest Revision made and the latest
// that became ready.
type ConfigurationStatusFields struct {
	LatestReadyRevisionName   string `json:"latestReadyRevisionName,omitempty"`
	LatestCreatedRevisionName string `json:"latestCreatedRevisionName,omitempty"`
}

// RouteStatusFields are where a Route serves and the traffic it serves.
type RouteStatusFields struct {
	URL     *apis.URL           `json:"url,omitempty"`
	Address *duckv1.Addressable `json:"address,omitempty"`
	Traffic []TrafficTarget     `json:"traffic,omitempty"`
}

// GetStatus is the Service's conditions and observed generation.
func (s *Service) GetStatus() *duckv1.Status { return &s.Status.Status }

// A ServiceList is a list of Services.
// +kubebuilder:object:root=true
type ServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Service `json:"items"`
}
