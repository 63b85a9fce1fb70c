package local

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Binaries the control plane runs.
const (
	BinaryEtcd          = "etcd"
	BinaryKubeAPIServer = "kube-apiserver"
)

// Error messages of the preflight checks: each says what is wrong and what to do.
const (
	errNoBinDir     = "no folder for etcd and kube-apiserver: run from the repository, where make controlplane builds them into .cache/bin, or set KUBEBUILDER_ASSETS to a folder that has them"
	errFmtNoBinary  = "cannot find %s in %s: run `make controlplane` to build it"
	errFmtNotExec   = "%s is not an executable file: run `make controlplane` to rebuild it"
	errFmtBadPort   = "port %d is not a TCP port: choose one from 1 to 65535, or 0 for any free port"
	errFmtPortTaken = "port %d on 127.0.0.1 is taken (%v): stop what listens there or choose another port"
	errFmtStatfs    = "cannot read free space of %s"
	errFmtDiskFull  = "only %d MiB free in %s: etcd needs at least %d MiB; free some space or point the data folder elsewhere"
)

// MinFreeBytes is the free disk space etcd needs for its data folder. etcd's
// write-ahead log preallocates 64 MiB segments; a few of them and the
// snapshots fit in 256 MiB.
const MinFreeBytes = 256 << 20

// checkBinaries fails unless every binary is an executable file in dir.
func checkBinaries(dir string) error {
	if dir == "" {
		return errors.New(errNoBinDir)
	}
	for _, name := range []string{BinaryEtcd, BinaryKubeAPIServer} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			return errors.Errorf(errFmtNoBinary, name, dir)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return errors.Errorf(errFmtNotExec, p)
		}
	}
	return nil
}

// checkPort fails when something already listens on the loopback port.
func checkPort(port int) error {
	if port == 0 {
		return nil
	}
	if port < 1 || port > 65535 {
		return errors.Errorf(errFmtBadPort, port)
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return errors.Errorf(errFmtPortTaken, port, err)
	}
	return l.Close()
}

// checkDisk fails when the folder's file system has less than min bytes free.
func checkDisk(dir string, minFree uint64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return errors.Wrapf(err, errFmtStatfs, dir)
	}
	free := st.Bavail * uint64(st.Bsize) //nolint:gosec // Bsize is never negative.
	if free < minFree {
		return errors.Errorf(errFmtDiskFull, free>>20, dir, minFree>>20)
	}
	return nil
}
