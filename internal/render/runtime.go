package render

import (
	"embed"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const (
	errNoLanguage       = "runtime.language is required to build a function"
	errFmtGoHandler     = "a go handler is the name of an exported function such as Handle, not %q"
	errFmtTemplate      = "cannot render the %s template"
	errFmtNoRuntimeFile = "no runtime file %s is embedded"
	errFmtUnsupported   = "unsupported %s version %q"
)

//go:embed runtimes
var runtimes embed.FS

// DefaultPort is the port a workload listens on unless its spec says another.
const DefaultPort int32 = 8080

// A language is what render knows of one runtime language.
type language struct {
	defaultVersion string
	defaultHandler string
	// baseImage and runImage take the version.
	baseImage, runImage string
	wrapper             string
	// extra are further files of the runtime's build context.
	extra []string
	// codeFile is where inline code goes for a handler.
	codeFile func(handler string) string
}

// languages are the supported runtimes. Base images are named by tag; the
// Dockerfile, and with it the build identity, changes when they do.
var languages = map[v1alpha1.Language]language{
	v1alpha1.LanguagePython: {
		defaultVersion: "3.12",
		defaultHandler: "main.handler",
		baseImage:      "python:%s-slim",
		wrapper:        "lambda_wrapper.py",
		codeFile:       func(h string) string { return modulePath(h) + ".py" },
	},
	v1alpha1.LanguageNodeJS: {
		defaultVersion: "22",
		defaultHandler: "index.handler",
		baseImage:      "node:%s-slim",
		wrapper:        "lambda_wrapper.js",
		codeFile:       func(h string) string { return modulePath(h) + ".js" },
	},
	v1alpha1.LanguageGo: {
		defaultVersion: "1.25",
		defaultHandler: "Handle",
		baseImage:      "golang:%s",
		runImage:       "gcr.io/distroless/static-debian12:nonroot",
		wrapper:        "lambda_wrapper.go",
		extra:          []string{"lambda_build.sh"},
		codeFile:       func(string) string { return "handler.go" },
	},
}

// modulePath is the file path of a dotted handler's module: main.handler is
// main, billing.app.handle is billing/app.
func modulePath(handler string) string {
	i := strings.LastIndex(handler, ".")
	if i < 0 {
		return handler
	}
	return strings.ReplaceAll(handler[:i], ".", "/")
}

// A Runtime is a resolved runtime: the language, version and handler with
// defaults applied, and the files a build adds to the function's source.
type Runtime struct {
	Language v1alpha1.Language
	Version  string
	Handler  string
	Port     int32

	// Dockerfile of the build.
	Dockerfile string

	// Files the build context holds besides the source, by name: the
	// wrapper and any build script. The Dockerfile is not among them.
	Files map[string]string

	// Wrapper is the wrapper's content; part of Files, and of the identity.
	Wrapper string

	// CodeFile is where inline code goes, relative to the source folder.
	CodeFile string
}

// A BuildEnv is what the platform and the spec's build add to a runtime's
// Dockerfile.
type BuildEnv struct {
	// BaseImages replace the languages' public base images.
	BaseImages []v1alpha1.BaseImage

	// Args are the names of the build arguments, which the Dockerfile
	// declares so that the steps installing dependencies see them.
	Args []string
}

// baseImages are the images a language's builds of a version start from:
// the platform's entry for that version, else its entry for any version,
// else the public images.
func (e BuildEnv) baseImages(l v1alpha1.Language, lang language, version string) (base, run string) {
	base, run = strings.Replace(lang.baseImage, "%s", version, 1), lang.runImage
	var chosen *v1alpha1.BaseImage
	for i, b := range e.BaseImages {
		switch {
		case b.Language != l:
		case b.Version != nil && *b.Version == version:
			chosen = &e.BaseImages[i]
		case b.Version == nil && chosen == nil:
			chosen = &e.BaseImages[i]
		}
	}
	if chosen == nil {
		return base, run
	}
	base = strings.ReplaceAll(string(chosen.Image), versionPlaceholder, version)
	if chosen.RunImage != nil {
		run = string(*chosen.RunImage)
	}
	return base, run
}

// versionPlaceholder in a platform's base image is the language version.
const versionPlaceholder = "{version}"

// ResolveRuntime applies defaults to a spec's runtime and renders the files
// of its build in the platform's build environment.
func ResolveRuntime(rt *v1alpha1.Runtime, env BuildEnv) (Runtime, error) {
	if rt == nil || rt.Language == nil {
		return Runtime{}, errors.New(errNoLanguage)
	}
	lang, ok := languages[*rt.Language]
	if !ok {
		return Runtime{}, errors.Errorf(errFmtUnsupported, "language", *rt.Language)
	}
	r := Runtime{
		Language: *rt.Language,
		Version:  lang.defaultVersion,
		Handler:  lang.defaultHandler,
		Port:     DefaultPort,
	}
	if rt.Version != nil {
		r.Version = *rt.Version
	}
	if rt.Handler != nil {
		r.Handler = *rt.Handler
	}
	if rt.Port != 0 {
		r.Port = rt.Port
	}
	if r.Language == v1alpha1.LanguageGo && !isExportedIdentifier(r.Handler) {
		return Runtime{}, errors.Errorf(errFmtGoHandler, r.Handler)
	}
	r.CodeFile = lang.codeFile(r.Handler)

	base, run := env.baseImages(r.Language, lang, r.Version)
	vars := templateVars{
		Version: r.Version, Handler: r.Handler, Port: r.Port,
		BaseImage: base, RunImage: run, BuildArgs: env.Args,
	}
	dir := path.Join("runtimes", string(r.Language))
	var err error
	if r.Dockerfile, err = renderFile(path.Join(dir, "Dockerfile"), vars); err != nil {
		return Runtime{}, err
	}
	r.Files = map[string]string{}
	for _, name := range append([]string{lang.wrapper}, lang.extra...) {
		content, err := renderFile(path.Join(dir, name), vars)
		if err != nil {
			return Runtime{}, err
		}
		r.Files[name] = content
	}
	r.Wrapper = r.Files[lang.wrapper]
	return r, nil
}

// isExportedIdentifier is true for a Go identifier that starts with a capital.
func isExportedIdentifier(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// runtimeFiles are the embedded runtime files: templates parsed, plain files
// as they are.
type runtimeFiles struct {
	templates map[string]*template.Template
	plain     map[string]string
	// quoted are the plain files as JSON strings, by their text.
	quoted map[string][]byte
}

// loaded reads the runtime files once per process: rendering is on every
// reconcile's path.
var loaded = sync.OnceValues(func() (runtimeFiles, error) {
	rf := runtimeFiles{templates: map[string]*template.Template{}, plain: map[string]string{}, quoted: map[string][]byte{}}
	err := fs.WalkDir(runtimes, "runtimes", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := runtimes.ReadFile(name)
		if err != nil {
			return err
		}
		base, isTemplate := strings.CutSuffix(name, ".tmpl")
		if !isTemplate {
			rf.plain[name] = string(b)
			rf.quoted[rf.plain[name]] = mustQuote(rf.plain[name])
			return nil
		}
		t, err := template.New(name).Option("missingkey=error").Parse(string(b))
		rf.templates[base] = t
		return err
	})
	return rf, err
})

// templateVars are what the runtime files' templates are rendered with; a
// struct, whose fields a template reads without copying them as a map's.
type templateVars struct {
	Version, Handler    string
	Port                int32
	BaseImage, RunImage string
	BuildArgs           []string
}

// renderFile renders an embedded runtime file by its name without .tmpl.
func renderFile(name string, vars templateVars) (string, error) {
	rf, err := loaded()
	if err != nil {
		return "", errors.Wrapf(err, errFmtTemplate, name)
	}
	if text, ok := rf.plain[name]; ok {
		return text, nil
	}
	t, ok := rf.templates[name]
	if !ok {
		return "", errors.Errorf(errFmtNoRuntimeFile, name)
	}
	key := renderedKey{name: name, version: vars.Version, handler: vars.Handler, port: vars.Port,
		baseImage: vars.BaseImage, runImage: vars.RunImage, buildArgs: lengthPrefixed(vars.BuildArgs)}
	if text, ok := renderings.get(key); ok {
		return text, nil
	}
	var out strings.Builder
	if err := t.Execute(&out, vars); err != nil {
		return "", errors.Wrapf(err, errFmtTemplate, name)
	}
	renderings.put(key, out.String())
	return out.String(), nil
}

// A renderedKey is a runtime file and everything its template reads.
type renderedKey struct {
	name, version, handler string
	port                   int32
	baseImage, runImage    string
	buildArgs              string
}

// lengthPrefixed joins ss, each after its length, so that no two lists
// join the same.
func lengthPrefixed(ss []string) string {
	var b []byte
	for _, s := range ss {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	return string(b)
}

// maxRendered bounds how many renderings of runtime files are kept.
const maxRendered = 1024

// renderedFiles are runtime files as their templates rendered them. Every
// pass renders the files of each function's build to learn its identity,
// though nearly every function of a platform shares them: executing the
// templates was a twentieth of what a composition function's pass
// allocated.
type renderedFiles struct {
	mu    sync.RWMutex
	files map[renderedKey]string
	// quoted are the renderings as JSON strings, by their text.
	quoted map[string][]byte
}

var renderings = &renderedFiles{files: map[renderedKey]string{}, quoted: map[string][]byte{}}

func (r *renderedFiles) get(k renderedKey) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	text, ok := r.files[k]
	return text, ok
}

// put keeps a rendering and its JSON string; once maxRendered are kept, it
// starts again from none, which costs only renderings.
func (r *renderedFiles) put(k renderedKey, text string) {
	q := mustQuote(text)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.files) >= maxRendered {
		clear(r.files)
		clear(r.quoted)
	}
	r.files[k] = text
	r.quoted[text] = q
}

// quotedOf is the JSON string of a rendering kept, by its text.
func (r *renderedFiles) quotedOf(text string) ([]byte, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	b := r.quoted[text]
	return b, b != nil
}
