package cli

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errFmtName     = "%q cannot name a function: it must be a DNS-1035 label of at most 40 characters (lowercase letters, digits and '-', starting with a letter)"
	errFmtExists   = "%s exists: init writes only into a new folder"
	errFmtWrite    = "cannot write %s"
	errFmtLanguage = "--language must be python, nodejs or go, not %q"
	errFmtVersion  = "--version %s of %s would be refused: supported versions are %s"
	errStarter     = "cannot read the starter files"
)

// Manifests init writes beside the code.
const (
	ManifestFunction = "lambdafunction.yaml"
	ManifestLambda   = "lambda.yaml"
)

//go:embed starters
var starters embed.FS

// functionName is the name rule of LambdaFunctions and Lambdas.
var functionName = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)

// A starter is what init fills its files in with.
type starter struct {
	Name, CodeFile string
	// Spec is the manifests' source and runtime, the code inline.
	Spec string
}

var manifests = template.Must(template.New("").Funcs(template.FuncMap{"indent": indentBy}).Parse(`
{{- define "` + ManifestFunction + `" -}}
# The {{.Name}} function as a managed resource: kubectl apply -f ` + ManifestFunction + `
# Its code is inline, a copy of {{.CodeFile}}: kubectl lambda run runs the
# folder's files, and kubectl apply deploys the copy below.
apiVersion: lambda.m.crossplane.io/v1alpha1
kind: LambdaFunction
metadata:
  name: {{.Name}}
spec:
  forProvider:
{{indent 4 .Spec}}
{{end}}
{{- define "` + ManifestLambda + `" -}}
# The {{.Name}} function through the platform API, where the platform offers
# it: kubectl apply -f ` + ManifestLambda + ` in the team's namespace.
# Its code is inline, a copy of {{.CodeFile}}.
apiVersion: platform.lambda.crossplane.io/v1alpha1
kind: Lambda
metadata:
  name: {{.Name}}
spec:
{{indent 2 .Spec}}
{{end}}`))

// initFunction writes a new function of a language into dir: the starter's
// handler, its test in the language's own test tool, and the manifests.
// An empty version is the language's default.
func initFunction(dir, name string, lang v1alpha1.Language, version string, out io.Writer) error {
	if !functionName.MatchString(name) {
		return errors.Errorf(errFmtName, name)
	}
	spec := &v1alpha1.Runtime{Language: &lang}
	// Its only error here is a language render does not know: the starters'
	// Go handler is Handle.
	rt, err := render.ResolveRuntime(spec, render.BuildEnv{})
	if err != nil {
		return errors.Errorf(errFmtLanguage, lang)
	}
	if version != "" {
		if !lang.Supports(version) {
			return errors.Errorf(errFmtVersion, version, lang, v1alpha1.SupportedVersions)
		}
		rt.Version = version
	}
	if _, err := os.Stat(dir); err == nil {
		return errors.Errorf(errFmtExists, dir)
	}
	files, err := starterFiles(lang, name)
	if err != nil {
		return err
	}
	st := starter{Name: name, CodeFile: rt.CodeFile}
	code := "source:\n  inline:\n    code: |\n" + indentBy(6, files[rt.CodeFile]) + "\n"
	if dep := files[render.DependencyFile(lang)]; dep != "" {
		code += "    dependencies: |\n" + indentBy(6, dep) + "\n"
	}
	st.Spec = code + fmt.Sprintf("runtime:\n  language: %s\n  version: %q", lang, rt.Version)
	for _, m := range []string{ManifestFunction, ManifestLambda} {
		var b bytes.Buffer
		if err := manifests.ExecuteTemplate(&b, m, st); err != nil {
			return errors.Wrapf(err, errFmtWrite, m)
		}
		files[m] = b.String()
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return errors.Wrapf(err, errFmtWrite, dir)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return errors.Wrapf(err, errFmtWrite, name)
		}
	}
	_, err = fmt.Fprintf(out, "Wrote a %s function to %s: %s and its test, %s and %s.\n"+
		"Test it:   %s\nRun it:    kubectl lambda run %s\nDeploy it: kubectl apply -f %s\n",
		lang, dir, rt.CodeFile, ManifestFunction, ManifestLambda, testCommand[lang],
		filepath.Join(dir, ManifestFunction), filepath.Join(dir, ManifestFunction))
	return err
}

// testCommand runs a starter's test in its folder.
var testCommand = map[v1alpha1.Language]string{
	v1alpha1.LanguagePython: "python3 -m unittest",
	v1alpha1.LanguageNodeJS: "node --test",
	v1alpha1.LanguageGo:     "go test ./...",
}

// starterFiles are a language's starter files by name, a .tmpl one filled
// in with the function's name and named without the suffix.
func starterFiles(lang v1alpha1.Language, name string) (map[string]string, error) {
	root := path.Join("starters", string(lang))
	entries, err := starters.ReadDir(root)
	if err != nil {
		return nil, errors.Wrap(err, errStarter)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := fs.ReadFile(starters, path.Join(root, e.Name()))
		if err != nil {
			return nil, errors.Wrap(err, errStarter)
		}
		n, templated := strings.CutSuffix(e.Name(), ".tmpl")
		if !templated {
			files[n] = string(b)
			continue
		}
		t, err := template.New(n).Parse(string(b))
		if err != nil {
			return nil, errors.Wrap(err, errStarter)
		}
		var out bytes.Buffer
		if err := t.Execute(&out, struct{ Name string }{name}); err != nil {
			return nil, errors.Wrap(err, errStarter)
		}
		files[n] = out.String()
	}
	return files, nil
}

// indentBy puts n spaces before every line of s that is not empty.
func indentBy(n int, s string) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}
