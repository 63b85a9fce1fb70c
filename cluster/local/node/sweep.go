package node

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errSweep     = "cannot remove what the local cluster left"
	errFmtAlive  = "processes %v of the cluster did not die"
	cgroupFS     = "/sys/fs/cgroup"
	killTimeout  = 15 * time.Second
	removeTrials = 20
)

// Sweep removes everything a cluster of dir left, whether it stopped or
// was killed: every process in its network namespace (its own programs and
// containerd's shims) and in its pods' cgroups, every mount below dir
// (containers' root file systems, pods' volumes and network namespaces),
// the cgroups, the network namespace with its links and firewall rules,
// and dir itself. It finds them by name and by what the system lists, not
// by what a run remembered.
func Sweep(dir string) error {
	ctx := context.Background()
	errs := []error{killAll()}
	errs = append(errs, unmountUnder(dir), removeCgroups(), deleteNetwork(ctx))
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Wrap(errors.Join(errs...), errSweep)
}

// killAll kills the processes of the cluster and waits until they are gone.
func killAll() error {
	pids := members()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(killTimeout)
	for {
		left := slices.DeleteFunc(pids, gone)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Errorf(errFmtAlive, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// members are the processes in the cluster's network namespace and in its
// pods' cgroups.
func members() []int {
	var pids []int
	if ns, err := os.Stat(netnsPath()); err == nil {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			if n, err := os.Stat(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && os.SameFile(ns, n) {
				pids = append(pids, pid)
			}
		}
	}
	for _, d := range cgroups() {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// gone is true of a process that has exited: it is no longer listed, or it
// is a zombie that its parent (init, for a killed run's) has yet to reap.
func gone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// cgroups are the cluster's cgroup folders in every hierarchy, deepest
// first.
func cgroups() []string {
	var dirs []string
	hierarchies, _ := os.ReadDir(cgroupFS)
	for _, h := range hierarchies {
		root := filepath.Join(cgroupFS, h.Name(), cgroupRoot)
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return dirs
}

// removeCgroups removes the cluster's cgroups, deepest first. A cgroup is
// busy for a moment after its last process died, so each is tried again.
func removeCgroups() error {
	var last error
	for range removeTrials {
		last = nil
		for _, d := range cgroups() {
			if err := syscall.Rmdir(d); err != nil && !os.IsNotExist(err) {
				last = errors.Wrapf(err, "cannot remove cgroup %s", d)
			}
		}
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	points, err := mountsUnder(abs)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !os.IsNotExist(err) {
			errs = append(errs, errors.Wrapf(err, "cannot unmount %s", p))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or below dir, deepest first, as
// /proc/self/mountinfo has them.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // Only read.
	var points []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescape(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	return points, s.Err()
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
