// Package kinds says which kinds of object the provider knows: those it
// writes to a target cluster, and those its manager reads besides.
package kinds

import (
	"slices"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/knative-lambda/provider-knative-lambda/apis"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

// targetKinds are every kind the provider writes to a target cluster.
var targetKinds = []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, servingv1.AddToScheme, eventingv1.AddToScheme, sourcesv1.AddToScheme}

// TargetScheme knows every kind the provider writes to a target cluster.
func TargetScheme() (*runtime.Scheme, error) {
	return scheme(targetKinds...)
}

// ManagerScheme knows the provider's APIs, CRDs for the controller gate, and
// every kind written to a target cluster: the manager's own client is the
// client of the provider's cluster as a target.
func ManagerScheme() (*runtime.Scheme, error) {
	return scheme(append(slices.Clone(targetKinds), extv1.AddToScheme, apis.AddToScheme)...)
}

func scheme(adds ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range adds {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
