package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksNoKubernetesClient keeps Kubernetes clients out of the function:
// it talks only gRPC, and linking them made a third of its memory.
func TestLinksNoKubernetesClient(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	cases := map[string]struct {
		reason string
		pkg    string
	}{
		"ControllerRuntimeClient": {
			reason: "controller-runtime's client links client-go's clientset and every built-in API group's scheme.",
			pkg:    "sigs.k8s.io/controller-runtime/pkg/client",
		},
		"Clientset": {
			reason: "client-go's typed clientset, its informers and listers.",
			pkg:    "k8s.io/client-go/kubernetes",
		},
		"CrossplaneRuntimeResource": {
			reason: "crossplane-runtime's resource package links controller-runtime's client.",
			pkg:    "github.com/crossplane/crossplane-runtime/v2/pkg/resource",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if i := slices.IndexFunc(deps, func(d string) bool { return d == tc.pkg || strings.HasPrefix(d, tc.pkg+"/") }); i >= 0 {
				t.Errorf("%s\nthe function links %s", tc.reason, deps[i])
			}
		})
	}
}
