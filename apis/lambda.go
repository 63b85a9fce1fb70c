// Package apis contains the Kubernetes APIs of provider-knative-lambda.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// AddToScheme adds every API of this provider to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	if err := v1alpha1.SchemeBuilder.AddToScheme(s); err != nil {
		return err
	}
	return lists.SchemeBuilder.AddToScheme(s)
}
