package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	eventingduckv1 "knative.dev/eventing/pkg/apis/duck/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
)

// A Trigger subscribes a subscriber to the events of a Broker that pass its
// filters.
// +kubebuilder:object:root=true
type Trigger struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TriggerSpec   `json:"spec,omitempty"`
	Status TriggerStatus `json:"status,omitempty"`
}

// A TriggerSpec names the Broker, the filters and the subscriber.
type TriggerSpec struct {
	Broker     string                       `json:"broker,omitempty"`
	BrokerRef  *duckv1.KReference           `json:"brokerRef,omitempty"`
	Filter     *TriggerFilter               `json:"filter,omitempty"`
	Filters    []SubscriptionsAPIFilter     `json:"filters,omitempty"`
	Subscriber duckv1.Destination           `json:"subscriber"`
	Delivery   *eventingduckv1.DeliverySpec `json:"delivery,omitempty"`
}

// A TriggerFilter passes the events whose attributes equal all of these.
type TriggerFilter struct {
	Attributes TriggerFilterAttributes `json:"attributes,omitempty"`
}

// TriggerFilterAttributes are CloudEvents attributes and the values they
// must have.
type TriggerFilterAttributes map[string]string

// A SubscriptionsAPIFilter is one filter of the CloudEvents Subscriptions
// API dialects.
type SubscriptionsAPIFilter struct {
	All    []SubscriptionsAPIFilter `json:"all,omitempty"`
	Any    []SubscriptionsAPIFilter `json:"any,omitempty"`
	Not    *SubscriptionsAPIFilter  `json:"not,omitempty"`
	Exact  map[string]string        `json:"exact,omitempty"`
	Prefix map[string]string        `json:"prefix,omitempty"`
	Suffix map[string]string        `json:"suffix,omitempty"`
	CESQL  string                   `json:"cesql,omitempty"`
}

// A TriggerStatus is what Knative's trigger reconciler reports: conditions
// and the subscriber it resolved.
type TriggerStatus struct {
	duckv1.Status                 `json:",inline"`
	SubscriberURI                 *apis.URL `json:"subscriberUri,omitempty"`
	SubscriberCACerts             *string   `json:"subscriberCACerts,omitempty"`
	SubscriberAudience            *string   `json:"subscriberAudience,omitempty"`
	eventingduckv1.DeliveryStatus `json:",inline"`
	Auth                          *duckv1.AuthStatus `json:"auth,omitempty"`
}

// GetStatus is the Trigger's conditions and observed generation.
func (t *Trigger) GetStatus() *duckv1.Status { return &t.Status.Status }

// A TriggerList is a list of Triggers.
// +kubebuilder:object:root=true
type TriggerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Trigger `json:"items"`
}
