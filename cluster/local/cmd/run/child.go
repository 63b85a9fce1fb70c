package main

import (
	"context"
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

// A child is a program of this module that run built and started. It dies
// with run, even when run is killed.
type child struct {
	name   string
	cmd    *exec.Cmd
	exited chan error
}

// startChild builds the command pkg of the module at root and starts it with
// args, and with KUBECONFIG set when kubeconfig is not empty.
func startChild(ctx context.Context, root, name, pkg, kubeconfig string, args ...string) (*child, error) {
	bin := filepath.Join(root, ".cache", "bin", name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir, build.Stdout, build.Stderr = root, os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return nil, errors.Wrapf(err, errFmtBuild, name)
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // Our own binary, just built.
	cmd.Env = os.Environ()
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrapf(err, errFmtStart, name)
	}
	c := &child{name: name, cmd: cmd, exited: make(chan error, 1)}
	go func() { c.exited <- cmd.Wait() }()
	return c, nil
}

// stop asks a child to stop and kills it if it does not within 15 seconds.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}
