// Package process starts the programs that make run, the end-to-end tests and
// the benchmarks run beside the local control plane, and reads what each one
// costs from /proc.
package process

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtBuild = "cannot build %s"
	errFmtStart = "cannot start %s"
)

// stopGrace is how long a process has to stop after SIGTERM before it is
// killed.
const stopGrace = 15 * time.Second

// Build builds the command pkg of the module at root into root's .cache/bin
// and returns the binary's path.
func Build(ctx context.Context, root, name, pkg string) (string, error) {
	// Absolute, because the build runs in root.
	root, err := filepath.Abs(root)
	if err != nil {
		return "", errors.Wrapf(err, errFmtBuild, name)
	}
	bin := filepath.Join(root, ".cache", "bin", name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir, build.Stdout, build.Stderr = root, os.Stdout, os.Stderr
	return bin, errors.Wrapf(build.Run(), errFmtBuild, name)
}

// A Process is a started program. It dies with the program that started it,
// even when that one is killed.
type Process struct {
	Name string
	cmd  *exec.Cmd
	// Exited receives the program's exit once.
	Exited chan error
}

// Options of a started program.
type Options struct {
	// Env is added to this program's environment.
	Env []string
	// Out receives the program's output; nil means this program's.
	Out io.Writer
}

// Start starts the binary bin with args.
func Start(name, bin string, o Options, args ...string) (*Process, error) {
	cmd := exec.Command(bin, args...) //nolint:noctx // Stop and Kill end it, not a context.
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if o.Out != nil {
		cmd.Stdout, cmd.Stderr = o.Out, o.Out
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrapf(err, errFmtStart, name)
	}
	p := &Process{Name: name, cmd: cmd, Exited: make(chan error, 1)}
	go func() { p.Exited <- cmd.Wait() }()
	return p, nil
}

// Stop asks the program to stop and kills it if it does not in time.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited: //nolint:errcheck // Asked to stop: how it exited says nothing.
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.Exited //nolint:errcheck // Killed: how it exited says nothing.
	}
}

// Kill kills the program at once, as a crash or an evicted pod would end it,
// and waits until it is gone.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	<-p.Exited //nolint:errcheck // Killed: how it exited says nothing.
	return nil
}

// Pid is the program's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Usage reads what the program has cost so far.
func (p *Process) Usage() (Usage, error) {
	return ReadUsage(p.Pid())
}
