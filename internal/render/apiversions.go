package render

import (
	networkingv1 "k8s.io/api/networking/v1"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

// The API versions of the kinds render makes, written once: a
// GroupVersion's String makes a new string at every call, and render runs
// at every poll and pass.
var (
	eventingAPIVersion   = eventingv1.SchemeGroupVersion.String()
	networkingAPIVersion = networkingv1.SchemeGroupVersion.String()
	servingAPIVersion    = servingv1.SchemeGroupVersion.String()
	sourcesAPIVersion    = sourcesv1.SchemeGroupVersion.String()
)
