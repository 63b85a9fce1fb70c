package local

import (
	"os"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpextv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const (
	errFmtXRDs     = "cannot find the XRDs of %s"
	errFmtXRD      = "cannot read the XRD %s"
	errFmtXRDToCRD = "cannot make the CRDs of the XRD %s"
)

// PlatformCRDs are the CRDs Crossplane makes of the configuration package's
// XRDs, in the repository at root: each composite's, and each claim's.
// Crossplane owns them by their XRD, which a control plane without
// Crossplane does not have, so they carry no owner.
func PlatformCRDs(root string) ([]*extv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(root, "package", "configuration", "definition-*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, errors.Errorf(errFmtXRDs, root)
	}
	var crds []*extv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, errors.Wrapf(err, errFmtXRD, f)
		}
		xrd := &xpextv1.CompositeResourceDefinition{}
		if err := yaml.Unmarshal(b, xrd); err != nil {
			return nil, errors.Wrapf(err, errFmtXRD, f)
		}
		crd, err := xcrd.ForCompositeResource(xrd)
		if err != nil {
			return nil, errors.Wrapf(err, errFmtXRDToCRD, f)
		}
		crds = append(crds, crd)
		if xrd.Spec.ClaimNames != nil {
			claim, err := xcrd.ForCompositeResourceClaim(xrd)
			if err != nil {
				return nil, errors.Wrapf(err, errFmtXRDToCRD, f)
			}
			crds = append(crds, claim)
		}
	}
	for _, crd := range crds {
		crd.OwnerReferences = nil
	}
	return crds, nil
}
