// Package manifest reads Kubernetes objects from YAML files, and their
// conditions, for the tests, the examples and the local control plane, with
// no more dependencies than decoding needs.
package manifest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtReadManifest   = "cannot read %s"
	errFmtDecodeManifest = "cannot decode a document of %s"
	errFmtGlob           = "cannot list the YAML files of %s"
)

// Read decodes every object in a YAML file, or in every .yaml file of
// a folder in name order. Empty documents are skipped.
func Read(path string) ([]*unstructured.Unstructured, error) {
	files := []string{path}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.yaml"))
		if err != nil {
			return nil, errors.Wrapf(err, errFmtGlob, path)
		}
		sort.Strings(files)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, errors.Wrapf(err, errFmtReadManifest, f)
		}
		o, err := Decode(b, f)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// Decode decodes every object of the YAML documents in b, read from name.
// Empty documents are skipped.
func Decode(b []byte, name string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, errors.Wrapf(err, errFmtDecodeManifest, name)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, errors.Wrapf(err, errFmtDecodeManifest, name)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}
