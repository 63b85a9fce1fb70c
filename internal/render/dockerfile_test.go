package render

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// copySources parses a Dockerfile with BuildKit's parser and returns the
// build-context paths its COPY and ADD instructions read; copies from another
// stage read no context.
func copySources(t *testing.T, dockerfile string) []string {
	t.Helper()
	res, err := parser.Parse(strings.NewReader(dockerfile))
	if err != nil {
		t.Fatalf("BuildKit cannot parse the Dockerfile: %v\n%s", err, dockerfile)
	}
	var sources []string
	for _, n := range res.AST.Children {
		if !strings.EqualFold(n.Value, "copy") && !strings.EqualFold(n.Value, "add") {
			continue
		}
		if slices.ContainsFunc(n.Flags, func(f string) bool { return strings.HasPrefix(f, "--from=") }) {
			continue
		}
		var args []string
		for a := n.Next; a != nil; a = a.Next {
			args = append(args, a.Value)
		}
		sources = append(sources, args[:len(args)-1]...)
	}
	return sources
}

// contextEntries are the top-level names a build context holds: the paths of
// the ConfigMap's items, and src/ where a fetch step writes the source.
func contextEntries(o *Objects) map[string]bool {
	entries := map[string]bool{}
	for _, v := range o.BuildJob.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for _, item := range v.ConfigMap.Items {
			top, rest, nested := strings.Cut(item.Path, "/")
			if nested && rest != "" {
				top += "/"
			}
			entries[top] = true
		}
	}
	if len(o.BuildJob.Spec.Template.Spec.InitContainers) > 0 {
		entries["src/"] = true
	}
	return entries
}

// TestDockerfileMatchesContext checks, for every golden case that builds,
// that BuildKit parses the Dockerfile and that its COPY instructions read
// exactly what the build context holds: nothing missing, nothing unused.
func TestDockerfileMatchesContext(t *testing.T) {
	built := 0
	for _, tc := range goldenCases(t) {
		if tc.objects.BuildJob == nil {
			continue
		}
		built++
		t.Run(tc.name, func(t *testing.T) {
			copied := map[string]bool{"Dockerfile": true}
			for _, s := range copySources(t, tc.objects.BuildContext.Data["Dockerfile"]) {
				copied[s] = true
			}
			want := slices.Sorted(maps.Keys(copied))
			got := slices.Sorted(maps.Keys(contextEntries(tc.objects)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the Dockerfile reads (-) what the build context does not hold, or the context holds (+) what no COPY reads:\n%s", diff)
			}
		})
	}
	if built == 0 {
		t.Fatal("no golden case builds")
	}
}
