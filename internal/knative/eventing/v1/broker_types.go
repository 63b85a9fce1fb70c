package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	eventingduckv1 "knative.dev/eventing/pkg/apis/duck/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"
)

// A Broker receives CloudEvents and delivers them to the Triggers that name
// it.
// +kubebuilder:object:root=true
type Broker struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BrokerSpec   `json:"spec,omitempty"`
	Status BrokerStatus `json:"status,omitempty"`
}

// A BrokerSpec names the Broker's class configuration and how it delivers.
type BrokerSpec struct {
	Config   *duckv1.KReference           `json:"config,omitempty"`
	Delivery *eventingduckv1.DeliverySpec `json:"delivery,omitempty"`
}

// A BrokerStatus is what Knative's broker reconciler reports: conditions
// and the address events are sent to.
type BrokerStatus struct {
	duckv1.Status                             `json:",inline"`
	duckv1.AddressStatus                      `json:",inline"`
	eventingduckv1.DeliveryStatus             `json:",inline"`
	eventingduckv1.AppliedEventPoliciesStatus `json:",inline"`
}

// GetStatus is the Broker's conditions and observed generation.
func (b *Broker) GetStatus() *duckv1.Status { return &b.Status.Status }

// A BrokerList is a list of Brokers.
// +kubebuilder:object:root=true
type BrokerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Broker `json:"items"`
}
