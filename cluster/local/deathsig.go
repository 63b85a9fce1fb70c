package local

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const errDeathsigShims = "cannot write the launch shims of the control plane"

// deathsigShims writes, into a new folder, one shell script per binary that
// runs it through setpriv --pdeathsig KILL, so the kernel kills etcd and
// kube-apiserver if the process that started them dies without stopping
// them: a panic, a test timeout, a SIGKILL. envtest starts them in their own
// process group, so nothing else would. Without setpriv (util-linux) the
// binaries are used as they are.
func deathsigShims(binDir string) (string, func(), error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return binDir, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "lambda-bin-")
	if err != nil {
		return "", nil, errors.Wrap(err, errDeathsigShims)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	abs, err := filepath.Abs(binDir)
	if err != nil {
		cleanup()
		return "", nil, errors.Wrap(err, errDeathsigShims)
	}
	for _, name := range []string{BinaryEtcd, BinaryKubeAPIServer} {
		script := "#!/bin/sh\nexec " + setpriv + " --pdeathsig KILL -- " + filepath.Join(abs, name) + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o700); err != nil { //nolint:gosec // A script must be executable.
			cleanup()
			return "", nil, errors.Wrap(err, errDeathsigShims)
		}
	}
	return dir, cleanup, nil
}
