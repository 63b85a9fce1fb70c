package local

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"golang.org/x/mod/modfile"
)

var (
	// current are the modules built against the newest Kubernetes libraries:
	// the provider itself, its code generators, the control plane, and the
	// node's Kaniko and Knative.
	current = []string{"../..", "../tools", "build/kube-apiserver", "build/kube-controller-manager", "build/kube-node", "build/coredns", "build/versitygw", "build/kaniko", "build/knative"}

	// etcd is the control plane's store, which shares every module with
	// current but OpenTelemetry's.
	etcd = []string{"build/etcd"}

	// older are the releases written against older Kubernetes libraries:
	// Crossplane's CLI and core, Helm (which renders Crossplane's chart),
	// and Flux, whose kustomize-controller v1.7.3
	// imports k8s.io/api/autoscaling/v2beta2, which k8s.io/api v0.36 removed.
	older = []string{"build/crossplane", "build/crossplane-core", "build/crossplane-chart", "build/flux"}

	// linter is golangci-lint's module, which make lint builds.
	linter = []string{"../lint"}

	// linterAhead are the modules golangci-lint v2.15.0 requires newer
	// versions of than the provider selects: raising them in the provider
	// and every current wrapper is still to do, so a cold machine compiles
	// their 4.4 MB for the linter alone.
	linterAhead = regexp.MustCompile(`^(golang\.org/x/(tools|mod)|google\.golang\.org/protobuf|github\.com/mattn/go-colorable)$`)

	// kubernetesLibraries are the modules whose versions go with a Kubernetes
	// release, so current and older may select different ones.
	kubernetesLibraries = regexp.MustCompile(`^(k8s\.io/|sigs\.k8s\.io/(controller-runtime|controller-tools|structured-merge-diff/v6)$|github\.com/google/cel-go$)`)

	// crossplaneReleases are the modules that differ between the CLI of
	// v2.2.1 and the core of v2.4.0: the releases themselves and the runtime
	// each is written against.
	crossplaneReleases = regexp.MustCompile(`^github\.com/crossplane/(crossplane|crossplane-runtime)/v2$`)

	// openTelemetry is what etcd v3.7.3 selects apart: v1.45, whose SDK's
	// default resource has schema 1.43, which Knative v0.50's resource
	// (schema 1.41) cannot merge with, so Knative's processes built with it
	// panic at start. The others keep v1.44, which Kubernetes requires;
	// only OpenTelemetry's packages and etcd's own compile twice.
	openTelemetry = regexp.MustCompile(`^go\.opentelemetry\.io/`)

	nothing = regexp.MustCompile(`^$`)
)

// TestWrappersShareVersions checks that the provider's module and the tool
// wrappers require the same version of every module they share, except
// those a case lists. A cold machine compiles a package once for every
// version of it (and of its dependencies) that some build selects, so one
// drifting require makes a cold CI run compile a shared tree twice. To fix a
// drift, require the higher version in both modules and run go mod tidy.
func TestWrappersShareVersions(t *testing.T) {
	cases := map[string]struct {
		reason string
		pairs  [][2]string
		differ *regexp.Regexp
	}{
		"CurrentKubernetes": {
			reason: "The provider, its generators and the control plane build against one set of versions.",
			pairs:  within(current),
			differ: nothing,
		},
		"OlderKubernetes": {
			reason: "Crossplane's CLI and core and Flux build against one set of versions, but for the Crossplane releases.",
			pairs:  within(older),
			differ: crossplaneReleases,
		},
		"Etcd": {
			reason: "etcd builds with the provider's versions but OpenTelemetry's.",
			pairs:  across(etcd, current),
			differ: openTelemetry,
		},
		"EtcdAndOlder": {
			reason: "etcd and the older set share every module but OpenTelemetry, the Kubernetes libraries and the Crossplane releases.",
			pairs:  across(etcd, older),
			differ: regexp.MustCompile(openTelemetry.String() + "|" + kubernetesLibraries.String() + "|" + crossplaneReleases.String()),
		},
		"Linter": {
			reason: "golangci-lint builds with the provider's versions but those it needs newer.",
			pairs:  across(linter, current),
			differ: linterAhead,
		},
		"Across": {
			reason: "Both sets share every module but the Kubernetes libraries and the Crossplane releases.",
			pairs:  across(current, older),
			differ: regexp.MustCompile(kubernetesLibraries.String() + "|" + crossplaneReleases.String()),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, p := range tc.pairs {
				a, b := requires(t, p[0]), requires(t, p[1])
				for m, va := range a {
					if vb, ok := b[m]; ok && va != vb && !tc.differ.MatchString(m) {
						t.Errorf("%s\n%s requires %s %s, %s requires %s", tc.reason, p[0], m, va, p[1], vb)
					}
				}
			}
		})
	}
}

// within returns every pair of the modules in dirs.
func within(dirs []string) [][2]string {
	var p [][2]string
	for i, a := range dirs {
		for _, b := range dirs[i+1:] {
			p = append(p, [2]string{a, b})
		}
	}
	return p
}

// across returns every pair of a module in a and one in b.
func across(a, b []string) [][2]string {
	var p [][2]string
	for _, da := range a {
		for _, db := range b {
			p = append(p, [2]string{da, db})
		}
	}
	return p
}

// requires returns the version that the module in dir selects for each
// module it requires or replaces with another version of itself.
func requires(t *testing.T, dir string) map[string]string {
	t.Helper()
	file := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]string{}
	for _, r := range f.Require {
		v[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if r.Old.Path == r.New.Path {
			v[r.Old.Path] = r.New.Version
		}
	}
	return v
}
