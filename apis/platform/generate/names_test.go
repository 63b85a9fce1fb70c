package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpextv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
)

// TestPlatformNames turns the configuration's XRDs into CRDs as Crossplane
// does, installs them in a real API server and creates composites and
// claims named as the managed resources may not be. Before, a 45-character
// Lambda passed and failed late on a Job name over 63 characters, and a
// dotted one made an invalid Service name.
func TestPlatformNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var crds []*extv1.CustomResourceDefinition
	files, err := filepath.Glob("../../../package/configuration/definition-*.yaml")
	if err != nil || len(files) != 4 {
		t.Fatalf("XRDs: %v, %v; want the four of package/configuration", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // Our package's files.
		if err != nil {
			t.Fatal(err)
		}
		xrd := &xpextv1.CompositeResourceDefinition{}
		if err := yaml.Unmarshal(b, xrd); err != nil {
			t.Fatal(err)
		}
		crd, err := xcrd.ForCompositeResource(xrd)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
		if xrd.Spec.ClaimNames != nil {
			claim, err := xcrd.ForCompositeResourceClaim(xrd)
			if err != nil {
				t.Fatal(err)
			}
			crds = append(crds, claim)
		}
		// Crossplane owns what it generates by its XRD, which this test
		// does not create.
		for _, crd := range crds {
			crd.OwnerReferences = nil
		}
	}
	cp, err := local.Start(ctx, local.Options{CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop() //nolint:errcheck // Best effort at the end of a test.
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	spec := map[string]any{"source": map[string]any{"image": map[string]any{"repository": "ghcr.io/acme/fn", "tag": "v1"}}}
	agent := map[string]any{"image": map[string]any{"repository": "ghcr.io/acme/agent", "tag": "v1"}, "ai": map[string]any{"provider": "ollama", "endpoint": "http://ollama:11434", "model": "llama3.2"}}
	long := "a" + strings.Repeat("b", 44)
	cases := []struct {
		reason, kind, namespace, name string
		spec                          map[string]any
		ok                            bool
	}{
		{reason: "A 45-character Lambda.", kind: "Lambda", namespace: "default", name: long, spec: spec},
		{reason: "A dotted Lambda.", kind: "Lambda", namespace: "default", name: "hello.world", spec: spec},
		{reason: "A 45-character LambdaClaim.", kind: "LambdaClaim", namespace: "default", name: long, spec: spec},
		{reason: "A dotted AgentClaim.", kind: "AgentClaim", namespace: "default", name: "helper.bot", spec: agent},
		{reason: "A 45-character Agent.", kind: "Agent", namespace: "default", name: long, spec: agent},
		{reason: "A 40-character Lambda is the longest allowed.", kind: "Lambda", namespace: "default", name: long[:40], spec: spec, ok: true},
		{reason: "A legacy XR named after a 40-character claim with Crossplane's suffix.", kind: "XLambda", name: long[:40] + "-x7k2p", spec: spec, ok: true},
	}
	for _, tc := range cases {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": tc.spec}}
		u.SetAPIVersion("platform.lambda.crossplane.io/v1alpha1")
		u.SetKind(tc.kind)
		u.SetNamespace(tc.namespace)
		u.SetName(tc.name)
		err := c.Create(ctx, u)
		switch {
		case tc.ok && err != nil:
			t.Errorf("\n%s\ncreate %s %s: %v; want it admitted", tc.reason, tc.kind, tc.name, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "metadata.name must be a DNS-1035 label of at most 40 characters")):
			t.Errorf("\n%s\ncreate %s %s: %v; want the name rule's refusal", tc.reason, tc.kind, tc.name, err)
		}
	}
}
