// Command crossplane-chart renders a Helm chart's templates to one YAML
// stream, as helm template does, for a release in a namespace and with
// values set as helm's --set sets them.
//
//	crossplane-chart --chart DIR --namespace NS [--set KEY=VALUE]... > manifests.yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
)

// sets collects each --set.
type sets []string

func (s *sets) String() string     { return strings.Join(*s, ",") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var values sets
	dir := flag.String("chart", "", "The chart's folder.")
	name := flag.String("release", "crossplane", "The release's name.")
	ns := flag.String("namespace", "crossplane-system", "The release's namespace.")
	flag.Var(&values, "set", "A value, as helm's --set takes it; repeatable.")
	flag.Parse()
	if err := render(*dir, *name, *ns, values); err != nil {
		fmt.Fprintln(os.Stderr, "crossplane-chart:", err)
		os.Exit(1)
	}
}

func render(dir, name, ns string, values []string) error {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return err
	}
	vals := map[string]any{}
	for _, v := range values {
		if err := strvals.ParseInto(v, vals); err != nil {
			return err
		}
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: name, Namespace: ns, Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return err
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return err
	}
	files := make([]string, 0, len(out))
	for f, body := range out {
		// Helm prints neither notes nor partials, nor a template that
		// rendered to nothing.
		if strings.TrimSpace(body) != "" && !strings.HasPrefix(path.Base(f), "_") && path.Base(f) != "NOTES.txt" {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	for _, f := range files {
		fmt.Printf("---\n# Source: %s\n%s\n", f, out[f])
	}
	return nil
}
