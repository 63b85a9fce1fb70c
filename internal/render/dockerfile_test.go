package render

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// instructions parses a Dockerfile with BuildKit's parser.
func instructions(t *testing.T, dockerfile string) []*parser.Node {
	t.Helper()
	res, err := parser.Parse(strings.NewReader(dockerfile))
	if err != nil {
		t.Fatalf("BuildKit cannot parse the Dockerfile: %v\n%s", err, dockerfile)
	}
	return res.AST.Children
}

// copySources returns the build-context paths a Dockerfile's COPY and ADD
// instructions read; copies from another stage read no context.
func copySources(t *testing.T, dockerfile string) []string {
	t.Helper()
	var sources []string
	for _, n := range instructions(t, dockerfile) {
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

// contextEntries are the top-level names of the context Kaniko reads,
// folders with a slash. The fetch scripts copy the kubelet's ..data folders
// of the build's files too; no COPY names them.
func contextEntries(t *testing.T, o *Objects) map[string]bool {
	t.Helper()
	dir, err := os.ReadDir(kanikoContext(t, o))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]bool{}
	for _, e := range dir {
		switch {
		case strings.HasPrefix(e.Name(), ".."):
		case e.IsDir():
			entries[e.Name()+"/"] = true
		default:
			entries[e.Name()] = true
		}
	}
	return entries
}

// TestDockerfileMatchesContext checks, for every golden case that builds,
// that BuildKit parses the Dockerfile and that its COPY instructions read
// exactly what the build context holds: nothing missing, nothing unused.
func TestDockerfileMatchesContext(t *testing.T) {
	eachBuild(t, func(t *testing.T, o *Objects) {
		copied := map[string]bool{"Dockerfile": true}
		for _, s := range copySources(t, o.BuildContext.Data["Dockerfile"]) {
			copied[s] = true
		}
		want := slices.Sorted(maps.Keys(copied))
		got := slices.Sorted(maps.Keys(contextEntries(t, o)))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the Dockerfile reads (-) what the build context does not hold, or the context holds (+) what no COPY reads:\n%s", diff)
		}
	})
}

// eachBuild runs check on every golden case that builds, as a subtest.
func eachBuild(t *testing.T, check func(*testing.T, *Objects)) {
	t.Helper()
	built := 0
	for _, tc := range goldenCases(t) {
		if tc.objects.BuildJob == nil {
			continue
		}
		built++
		t.Run(tc.name, func(t *testing.T) { check(t, tc.objects) })
	}
	if built == 0 {
		t.Fatal("no golden case builds")
	}
}

// TestBuildArgsReachRun checks, with BuildKit's parser, that every build
// argument is declared in each stage before the steps it runs: Docker hands
// --build-arg only to the RUN steps of stages that declare it.
func TestBuildArgsReachRun(t *testing.T) {
	args := []string{"GOPROXY", "PIP_INDEX_URL"}
	for _, lang := range []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo} {
		t.Run(string(lang), func(t *testing.T) {
			rt, err := ResolveRuntime(&v1alpha1.Runtime{Language: ptr.To(lang)}, BuildEnv{Args: args})
			if err != nil {
				t.Fatal(err)
			}
			runs := 0
			var declared map[string]bool
			for _, n := range instructions(t, rt.Dockerfile) {
				switch strings.ToLower(n.Value) {
				case "from":
					declared = map[string]bool{}
				case "arg":
					declared[n.Next.Value] = true
				case "run":
					runs++
					for _, a := range args {
						if !declared[a] {
							t.Errorf("line %d runs %q without build argument %s declared in its stage:\n%s", n.StartLine, n.Original, a, rt.Dockerfile)
						}
					}
				}
			}
			if runs == 0 {
				t.Fatalf("the %s Dockerfile runs nothing, so this test checks nothing:\n%s", lang, rt.Dockerfile)
			}
		})
	}
}
