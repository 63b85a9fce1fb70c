package local

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// CrossplaneNamespace is the namespace Crossplane is installed into.
const CrossplaneNamespace = "crossplane-system"

// Examples reads the manifests of a folder of examples for a control plane
// this project started. The examples are written for a cluster with
// Crossplane installed, whose namespace exists (examples/provider-rbac.yaml
// grants the provider its leader election leases there), so that namespace
// comes with them.
func Examples(dir string) ([]*unstructured.Unstructured, error) {
	objs, err := manifest.Read(dir)
	if err != nil {
		return nil, err
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(CrossplaneNamespace)
	return append(objs, ns), nil
}
