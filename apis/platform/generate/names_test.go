package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	crds := mustPlatformCRDs(t)
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

// TestKubectlNames installs the managed resources' CRDs and the CRDs
// Crossplane makes of the XRDs in a real API server, and reads discovery as
// kubectl does: kubectl get knative-lambda lists every kind of this project,
// and no category is also a kind's name, which kubectl would expand instead
// (before, kubectl get lambda listed eleven kinds).
func TestKubectlNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	own, err := local.LoadCRDs("../../../package/crds")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := local.Start(ctx, local.Options{CRDs: append(mustPlatformCRDs(t), own...)})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop() //nolint:errcheck // Best effort at the end of a test.
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	inCategory := map[string][]string{}
	names := map[string]string{}
	for _, l := range lists {
		if !strings.Contains(l.GroupVersion, "lambda") {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			for _, c := range r.Categories {
				inCategory[c] = append(inCategory[c], r.Kind)
			}
			for _, n := range append([]string{r.Name, r.SingularName}, r.ShortNames...) {
				names[n] = r.Kind
			}
		}
	}
	want := []string{"Agent", "AgentClaim", "ClusterProviderConfig", "Lambda", "LambdaAgent", "LambdaClaim", "LambdaFunction", "ProviderConfig", "ProviderConfigUsage", "XAgent", "XLambda"}
	got := inCategory["knative-lambda"]
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("kubectl get knative-lambda lists, -want +got:\n%s", d)
	}
	for c := range inCategory {
		if k, ok := names[c]; ok {
			t.Errorf("category %q is also a name of %s: kubectl get %s lists the category %v", c, k, c, inCategory[c])
		}
	}
	for _, short := range []string{"lam", "xlam", "lamc", "agt", "xagt", "agtc", "lf", "la"} {
		if _, ok := names[short]; !ok {
			t.Errorf("no kind has the short name %q", short)
		}
	}
}

// mustPlatformCRDs are the CRDs Crossplane makes of the configuration's
// XRDs.
func mustPlatformCRDs(t *testing.T) []*extv1.CustomResourceDefinition {
	t.Helper()
	crds, err := local.PlatformCRDs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return crds
}
