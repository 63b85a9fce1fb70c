package local

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

const (
	errFmtGoCommand = "cannot run go %s (it locates CRDs in the module cache): %v: %s"
	errFmtGoJSON    = "cannot decode what go %s printed"
	errFmtNoModDir  = "go %s named no folder for module %s"
	errFmtReadCRDs  = "cannot read CRDs from %s"
	errFmtDecodeCRD = "cannot decode %s"
	errFmtNoCRDs    = "found no CRDs in %s"
)

// CrossplaneVersion is the Crossplane release whose CRDs the control plane
// installs. The provider itself only needs crossplane-runtime, so this module
// is not in go.mod; its files are read from the module cache.
const CrossplaneVersion = "v2.4.0"

// A CRDSource is a folder of CRD manifests inside a Go module.
type CRDSource struct {
	// Module path.
	Module string

	// Version of the module. Empty means the version go.mod requires, so
	// the CRDs always match the API types the code is built against.
	Version string

	// Dir is the folder inside the module.
	Dir string

	// In is the folder, relative to the repository, of the module whose
	// go.mod requires Module, when that is not this repository's: a tool's
	// wrapper module, so the CRDs match the binary make builds from it.
	In string
}

// ThirdPartyCRDs are the CRDs of Knative Serving, Knative Eventing, the
// RabbitmqBrokerConfig of eventing-rabbitmq and Crossplane, taken from the
// projects' own modules.
var ThirdPartyCRDs = []CRDSource{
	{Module: "knative.dev/serving", Dir: "config/core/300-resources"},
	{Module: "knative.dev/eventing", Dir: "config/core/resources"},
	{Module: "knative.dev/eventing-rabbitmq", Dir: "config/broker"},
	CrossplaneCRDs,
}

// FluxCRDs are the CRDs of Flux's source-controller and kustomize-controller,
// for the end-to-end test that runs them.
var FluxCRDs = []CRDSource{
	{Module: "github.com/fluxcd/source-controller", In: "cluster/local/build/flux", Dir: "config/crd/bases"},
	{Module: "github.com/fluxcd/kustomize-controller", In: "cluster/local/build/flux", Dir: "config/crd/bases"},
}

// CrossplaneCRDs are Crossplane core's own CRDs.
var CrossplaneCRDs = CRDSource{Module: "github.com/crossplane/crossplane/v2", Version: CrossplaneVersion, Dir: "cluster/crds"}

// goJSON runs the go command and decodes the JSON object it prints.
func goJSON(ctx context.Context, dir string, into any, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return errors.Errorf(errFmtGoCommand, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return errors.Wrapf(json.Unmarshal(out, into), errFmtGoJSON, strings.Join(args, " "))
}

// ModuleRoot is the folder of this repository's go.mod, found from dir.
func ModuleRoot(ctx context.Context, dir string) (string, error) {
	var env struct{ GOMOD string }
	if err := goJSON(ctx, dir, &env, "env", "-json", "GOMOD"); err != nil {
		return "", err
	}
	if env.GOMOD == "" || env.GOMOD == os.DevNull {
		return "", errors.Errorf(errFmtNoModDir, "env GOMOD", "github.com/knative-lambda/provider-knative-lambda")
	}
	return filepath.Dir(env.GOMOD), nil
}

// Path is where the source's folder is on this machine. Modules are
// downloaded into the module cache when they are not there yet.
func (s CRDSource) Path(ctx context.Context, root string) (string, error) {
	args := []string{"list", "-m", "-json", s.Module}
	if s.Version != "" {
		args = []string{"mod", "download", "-json", s.Module + "@" + s.Version}
	}
	if s.In != "" {
		// The module is the wrapper's dependency: download it, at the
		// version the wrapper requires, if the tool was never built.
		root = filepath.Join(root, filepath.FromSlash(s.In))
		args = []string{"mod", "download", "-json", s.Module}
	}
	var m struct{ Dir string }
	if err := goJSON(ctx, root, &m, args...); err != nil {
		return "", err
	}
	if m.Dir == "" {
		return "", errors.Errorf(errFmtNoModDir, strings.Join(args, " "), s.Module)
	}
	return filepath.Join(m.Dir, filepath.FromSlash(s.Dir)), nil
}

// OwnCRDsDir is where make generate writes this provider's CRDs.
func OwnCRDsDir(root string) string {
	return filepath.Join(root, "package", "crds")
}

// AllCRDs loads this provider's CRDs and every third-party CRD.
func AllCRDs(ctx context.Context, root string) ([]*extv1.CustomResourceDefinition, error) {
	own, err := LoadCRDs(OwnCRDsDir(root))
	if err != nil {
		return nil, err
	}
	third, err := SourceCRDs(ctx, root, ThirdPartyCRDs...)
	if err != nil {
		return nil, err
	}
	return append(own, third...), nil
}

// SourceCRDs loads the CRDs of each source, found from the repository at
// root.
func SourceCRDs(ctx context.Context, root string, sources ...CRDSource) ([]*extv1.CustomResourceDefinition, error) {
	var all []*extv1.CustomResourceDefinition
	for _, s := range sources {
		d, err := s.Path(ctx, root)
		if err != nil {
			return nil, err
		}
		crds, err := LoadCRDs(d)
		if err != nil {
			return nil, err
		}
		all = append(all, crds...)
	}
	return all, nil
}

// CRDsWhere loads, of the repository found from dir, the CRDs AllCRDs
// loads that keep says to, or all of them when keep is nil: a cluster
// without some of them stands in for one that lacks a component.
func CRDsWhere(ctx context.Context, dir string, keep func(*extv1.CustomResourceDefinition) bool) ([]*extv1.CustomResourceDefinition, error) {
	root, err := ModuleRoot(ctx, dir)
	if err != nil {
		return nil, err
	}
	crds, err := AllCRDs(ctx, root)
	if err != nil || keep == nil {
		return crds, err
	}
	return slices.DeleteFunc(crds, func(crd *extv1.CustomResourceDefinition) bool { return !keep(crd) }), nil
}

// LoadCRDs reads every CustomResourceDefinition in the YAML files of a folder.
// Other kinds of object in those files are skipped.
func LoadCRDs(dir string) ([]*extv1.CustomResourceDefinition, error) {
	objs, err := manifest.Read(dir)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtReadCRDs, dir)
	}
	crds, _, err := SplitCRDs(objs)
	if err != nil {
		return nil, err
	}
	if len(crds) == 0 {
		return nil, errors.Errorf(errFmtNoCRDs, dir)
	}
	return crds, nil
}

// SplitCRDs separates the CustomResourceDefinitions among objs, which a
// client installs and waits for (InstallCRDs), from the other objects.
func SplitCRDs(objs []*unstructured.Unstructured) ([]*extv1.CustomResourceDefinition, []*unstructured.Unstructured, error) {
	var crds []*extv1.CustomResourceDefinition
	var others []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() != "CustomResourceDefinition" {
			others = append(others, u)
			continue
		}
		crd := &extv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, nil, errors.Wrapf(err, errFmtDecodeCRD, u.GetName())
		}
		crds = append(crds, crd)
	}
	return crds, others, nil
}
