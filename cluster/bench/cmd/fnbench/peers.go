package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// A peer is a function this one is measured against. Each is given an Input
// that composes exactly what ours composed for the same XR, so the work
// differs only in how each gets there.
type peer struct {
	name string
	// input composes desired from the XR whose name and namespace they
	// hold.
	input func(desired map[string]*fnv1.Resource, name, namespace string) (map[string]any, error)
}

var (
	goTemplating      = peer{name: "function-go-templating", input: goTemplate}
	patchAndTransform = peer{name: "function-patch-and-transform", input: patchesAndTransforms}
)

// contender is the peer's contender for ours' request and answer, or one
// that says why it is skipped.
func (p peer) contender(dir string, req *fnv1.RunFunctionRequest, ours *fnv1.RunFunctionResponse) (*contender, error) {
	c := &contender{name: p.name, bin: filepath.Join(dir, p.name), args: []string{"--insecure"}, reference: ours}
	if _, err := os.Stat(c.bin); err != nil {
		c.skip = fmt.Sprintf("not built (%v); make peers builds it from its module", err)
		return c, nil
	}
	xr := req.GetObserved().GetComposite().GetResource().AsMap()
	meta, _ := xr["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	in, err := p.input(ours.GetDesired().GetResources(), name, namespace)
	if err != nil {
		return nil, err
	}
	s, err := structpb.NewStruct(in)
	if err != nil {
		return nil, err
	}
	c.req = proto.CloneOf(req)
	c.req.Input = s
	return c, nil
}

// goTemplate is a GoTemplate Input whose inline template writes each desired
// object as YAML, with the XR's name and namespace filled in.
func goTemplate(desired map[string]*fnv1.Resource, name, namespace string) (map[string]any, error) {
	var t strings.Builder
	t.WriteString("{{ $xr := .observed.composite.resource }}\n")
	for _, key := range slices.Sorted(maps.Keys(desired)) {
		obj := desired[key].GetResource().AsMap()
		meta, _ := obj["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
		}
		annotations["gotemplating.fn.crossplane.io/composition-resource-name"] = key
		meta["annotations"] = annotations
		y, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		doc := strings.ReplaceAll(string(y), "namespace: "+namespace+"\n", "namespace: {{ $xr.metadata.namespace }}\n")
		doc = strings.ReplaceAll(doc, name, "{{ $xr.metadata.name }}")
		t.WriteString("---\n" + doc)
	}
	return map[string]any{
		"apiVersion": "gotemplating.fn.crossplane.io/v1beta1",
		"kind":       "GoTemplate",
		"source":     "Inline",
		"inline":     map[string]any{"template": t.String()},
	}, nil
}

// patchesAndTransforms is a Resources Input with each desired object as a
// base, its namespace patched from the XR's and its name, when it holds the
// XR's name, formatted from it.
func patchesAndTransforms(desired map[string]*fnv1.Resource, name, _ string) (map[string]any, error) {
	resources := make([]any, 0, len(desired))
	for _, key := range slices.Sorted(maps.Keys(desired)) {
		obj := desired[key].GetResource().AsMap()
		meta, _ := obj["metadata"].(map[string]any)
		objName, _ := meta["name"].(string)
		patches := []any{map[string]any{"type": "FromCompositeFieldPath", "fromFieldPath": "metadata.namespace", "toFieldPath": "metadata.namespace"}}
		// A name without the XR's, such as a Broker's, is the base's own.
		if strings.Contains(objName, name) {
			patches = append(patches, map[string]any{
				"type": "FromCompositeFieldPath", "fromFieldPath": "metadata.name", "toFieldPath": "metadata.name",
				"transforms": []any{map[string]any{"type": "string", "string": map[string]any{
					"type": "Format", "fmt": strings.ReplaceAll(objName, name, "%s"),
				}}},
			})
		}
		resources = append(resources, map[string]any{"name": key, "base": obj, "patches": patches})
	}
	return map[string]any{"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": resources}, nil
}
