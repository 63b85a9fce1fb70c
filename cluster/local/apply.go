package local

import (
	"context"
	"sort"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtApply   = "cannot apply %s %s"
	errInstallCRD = "cannot install CRDs"
	errNewClient  = "cannot create a client"
)

// FieldManager owns what the local tooling applies.
const FieldManager = "provider-knative-lambda-local"

// InstallCRDs creates or updates CRDs and waits until each is served.
func InstallCRDs(cfg *rest.Config, crds []*extv1.CustomResourceDefinition) error {
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds})
	return errors.Wrap(err, errInstallCRD)
}

// Apply server-side applies objects, Namespaces first so the objects in them
// can follow.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	c, err := client.New(cfg, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		return errors.Wrap(err, errNewClient)
	}
	sorted := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].GetKind() == "Namespace" && sorted[j].GetKind() != "Namespace"
	})
	for _, o := range sorted {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return errors.Wrapf(err, errFmtApply, o.GetKind(), o.GetName())
		}
	}
	return nil
}
