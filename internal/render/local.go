package render

import (
	"path/filepath"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A LocalProgram runs a runtime's wrapper on this machine as its image's
// Dockerfile runs it in the container, with the language's own interpreter
// or toolchain and this machine's folders for the image's.
type LocalProgram struct {
	// Build, when set, is run first: Go compiles the code with the wrapper.
	Build []string
	// BuildEnv are variables Build needs besides the machine's.
	BuildEnv []string
	// Argv runs the wrapper.
	Argv []string
	// Env are the variables the Dockerfile sets, but PORT.
	Env []string
	// Dependencies is the code's dependency file, when the image's build
	// installs what it names; Install installs it as that build does, into
	// the code's folder Installed. Go's toolchain fetches modules as it
	// builds.
	Dependencies, Installed string
	Install                 []string
}

// pythonDeps is the folder of the code's where Python's build installs
// its dependencies (Dockerfile.tmpl).
const pythonDeps = ".deps"

// Local is the program of the runtime with the wrapper's files (Files) in
// lambdaDir, the function's code in srcDir, and Go's binary built at bin.
func (r Runtime) Local(lambdaDir, srcDir, bin string) LocalProgram {
	wrapper := filepath.Join(lambdaDir, languages[r.Language].wrapper)
	handler := EnvHandler + "=" + r.Handler
	switch r.Language {
	case v1alpha1.LanguagePython:
		deps := filepath.Join(srcDir, pythonDeps)
		return LocalProgram{
			Argv:         []string{"python3", wrapper},
			Env:          []string{handler, "PYTHONPATH=" + deps + string(filepath.ListSeparator) + srcDir, "PYTHONUNBUFFERED=1"},
			Dependencies: dependencyFile[r.Language], Installed: pythonDeps,
			Install: []string{"python3", "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--target", deps, "-r", filepath.Join(srcDir, dependencyFile[r.Language])},
		}
	case v1alpha1.LanguageNodeJS:
		return LocalProgram{
			Argv: []string{"node", wrapper}, Env: []string{handler, "LAMBDA_ROOT=" + srcDir},
			Dependencies: dependencyFile[r.Language], Installed: "node_modules",
			Install: []string{"npm", "install", "--omit=dev", "--no-audit", "--no-fund", "--prefix", srcDir},
		}
	default:
		return LocalProgram{
			Build:    []string{"sh", filepath.Join(lambdaDir, "lambda_build.sh"), srcDir, wrapper, bin, r.Handler},
			BuildEnv: []string{"CGO_ENABLED=0"},
			Argv:     []string{bin},
		}
	}
}
