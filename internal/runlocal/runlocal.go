// Package runlocal lays a function out on this machine to run as its image
// runs it: the runtime's wrapper, the code, and the program that starts
// them with the language's own interpreter or toolchain. kubectl lambda run
// and the runtime benchmark start functions through it.
package runlocal

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errPort      = "cannot find a free port"
	errFmtLayout = "cannot lay out the function's files in %s"
	errFmtNoTool = "%s is not on PATH: a function runs here with its language's own tools"
	errFmtBuild  = "cannot build the function (%s)"

	errFmtInstall      = "cannot install the function's dependencies (%s)"
	errFmtNotInstalled = "%s names dependencies that are not installed in %s: run `%s`, as the image's build does (run does not write into your folder)"
)

// Program writes the runtime's wrapper below dir and returns the program
// that runs it with the code in src; Go builds its binary into dir.
func Program(dir, src string, rt render.Runtime) (render.LocalProgram, error) {
	lambdaDir := filepath.Join(dir, "lambda")
	if err := WriteFiles(lambdaDir, rt.Files); err != nil {
		return render.LocalProgram{}, err
	}
	return rt.Local(lambdaDir, src, filepath.Join(dir, "function")), nil
}

// Inline writes source files, as render.InlineFiles lays them out, into
// dir/src and returns that folder.
func Inline(dir string, files []render.SourceFile) (string, error) {
	src := filepath.Join(dir, "src")
	byPath := make(map[string]string, len(files))
	for _, f := range files {
		byPath[f.Path] = f.Content
	}
	return src, WriteFiles(src, byPath)
}

// WriteFiles writes files, by slash-separated path relative to dir, below
// dir.
func WriteFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			return errors.Wrapf(err, errFmtLayout, dir)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return errors.Wrapf(err, errFmtLayout, dir)
		}
	}
	return nil
}

// Compile runs the program's build, if it has one, writing what it says to
// out and errOut.
func Compile(ctx context.Context, p render.LocalProgram, out, errOut io.Writer) error {
	if p.Build == nil {
		return nil
	}
	// The build script runs Go's toolchain.
	if _, err := exec.LookPath("go"); err != nil {
		return errors.Errorf(errFmtNoTool, "go")
	}
	return runTool(ctx, p.Build, "", p.BuildEnv, out, errOut, errFmtBuild)
}

// Install installs what the code's dependency file in src names, as the
// image's build does, unless it is installed already or the code has no
// such file. It writes into src only when owned, src being a folder run
// made; in the author's own folder it says what to run instead.
func Install(ctx context.Context, p render.LocalProgram, src string, owned bool, out, errOut io.Writer) error {
	if p.Dependencies == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(src, p.Dependencies)); err != nil {
		return nil //nolint:nilerr // No dependency file: nothing to install.
	}
	if _, err := os.Stat(filepath.Join(src, p.Installed)); err == nil {
		return nil
	}
	if !owned {
		return errors.Errorf(errFmtNotInstalled, filepath.Join(src, p.Dependencies), filepath.Join(src, p.Installed), strings.Join(p.Install, " "))
	}
	return runTool(ctx, p.Install, src, nil, out, errOut, errFmtInstall)
}

// runTool runs one of the runtime's own steps, argv, in dir (the current
// folder when empty) with env added to this machine's, writing what it
// says to out and errOut; errFmt says which step failed.
func runTool(ctx context.Context, argv []string, dir string, env []string, out, errOut io.Writer, errFmt string) error {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return errors.Errorf(errFmtNoTool, argv[0])
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) //nolint:gosec // The runtime's own build and install steps.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, errOut
	return errors.Wrapf(cmd.Run(), errFmt, strings.Join(argv, " "))
}

// Tool says whether the program's interpreter is on PATH.
func Tool(p render.LocalProgram) error {
	if _, err := exec.LookPath(p.Argv[0]); err != nil {
		return errors.Errorf(errFmtNoTool, p.Argv[0])
	}
	return nil
}

// FreePort is a port of loopback no one listens on, for a function to serve
// on.
func FreePort(ctx context.Context) (int, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, errors.Wrap(err, errPort)
	}
	defer l.Close() //nolint:errcheck // Only asked for its port.
	a, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New(errPort)
	}
	return a.Port, nil
}
