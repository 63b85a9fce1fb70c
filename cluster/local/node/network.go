package node

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtNetwork  = "cannot set up the cluster's network: %s"
	errFmtMissing  = "%s is missing: %s"
	errFmtTaken    = "the host already routes %s, which overlaps the cluster's %s: free it, or stop what uses it"
	errFmtRoutes   = "cannot read the host's routes"
	hintKube       = "run make node, which builds it into .cache/bin"
	hintPackages   = "run make node-packages, which installs containerd, runc, the CNI plugins and iptables from Debian's packages"
	cniPluginsPath = "/usr/lib/cni"
	// linkTrials are the tenths of a second the host's end of the veth
	// pair may take to go with the namespace.
	linkTrials = 50
)

// netnsPath is where ip netns keeps the cluster's network namespace.
func netnsPath() string { return filepath.Join("/run/netns", NetNS) }

// preflight checks that every program the cluster runs is here, and that
// its networks are free on the host; it returns the folder of the
// project's binaries, made absolute.
func preflight(ctx context.Context, binDir string) (string, error) {
	bin, err := filepath.Abs(binDir)
	if err != nil {
		return "", errors.Wrapf(err, errFmtMissing, binDir, hintKube)
	}
	for _, b := range []string{binEtcd, binAPIServer, binKCM, binScheduler, binKubelet, binProxy, binRegistry, PauseImage, CoreDNSImage} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return "", errors.Errorf(errFmtMissing, filepath.Join(bin, b), hintKube)
		}
	}
	for _, p := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "nsenter", "ip", "sysctl"} {
		if _, err := exec.LookPath(p); err != nil {
			return "", errors.Errorf(errFmtMissing, p, hintPackages)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(cniPluginsPath, p)); err != nil {
			return "", errors.Errorf(errFmtMissing, "the CNI plugin "+p, hintPackages)
		}
	}
	return bin, freeNetworks(ctx)
}

// freeNetworks refuses to start when a network of the host overlaps one of
// the cluster's: its pods would take or shadow the host's addresses.
func freeNetworks(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "ip", "-4", "-o", "route", "show").Output()
	if err != nil {
		return errors.Wrap(err, errFmtRoutes)
	}
	ours := []string{linkCIDR, podCIDR, ServiceCIDR}
	for _, line := range strings.Split(string(out), "\n") {
		dst, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			// "default", or a host route without a length.
			a, aerr := netip.ParseAddr(dst)
			if aerr != nil {
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		for _, o := range ours {
			if netip.MustParsePrefix(o).Overlaps(p) {
				return errors.Errorf(errFmtTaken, p, o)
			}
		}
	}
	return nil
}

// createNetwork makes the cluster's network namespace: a veth pair to the
// host, the pods' bridge, a route to Services through it, which
// kube-proxy's rules take over, and the host's route to the pods. The namespace has no default route: nothing
// in it reaches beyond this machine.
func createNetwork(ctx context.Context) error {
	in := func(args ...string) []string { return append([]string{"-n", NetNS}, args...) }
	steps := [][]string{
		{"netns", "add", NetNS},
		in("link", "set", "lo", "up"),
		{"link", "add", hostLink, "type", "veth", "peer", "name", "eth0", "netns", NetNS},
		{"addr", "add", HostIP + "/30", "dev", hostLink},
		{"link", "set", hostLink, "up"},
		in("addr", "add", NodeIP+"/30", "dev", "eth0"),
		in("link", "set", "eth0", "up"),
		in("link", "add", bridge, "type", "bridge"),
		in("addr", "add", bridgeIP+"/16", "dev", bridge),
		in("link", "set", bridge, "up"),
		in("route", "replace", ServiceCIDR, "dev", bridge, "src", bridgeIP),
		// The host reaches pods and Services through the node, where
		// kube-proxy's rules take the packets; the routes go with the
		// host's end of the pair.
		{"route", "add", podCIDR, "via", NodeIP, "dev", hostLink},
		{"route", "add", ServiceCIDR, "via", NodeIP, "dev", hostLink},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, "ip", s...).CombinedOutput(); err != nil {
			return errors.Wrapf(err, errFmtNetwork, "ip "+strings.Join(s, " ")+": "+strings.TrimSpace(string(out)))
		}
	}
	// Pods reach Services through kube-proxy's rules on the bridge, and
	// node ports on loopback.
	sysctl := []string{"netns", "exec", NetNS, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.route_localnet=1", "net.bridge.bridge-nf-call-iptables=1"}
	if out, err := exec.CommandContext(ctx, "ip", sysctl...).CombinedOutput(); err != nil {
		return errors.Wrapf(err, errFmtNetwork, strings.TrimSpace(string(out)))
	}
	return nil
}

// deleteNetwork removes the network namespace, and with it everything in
// it: the veth pair, the bridge, kube-proxy's rules. The kernel takes the
// host's end of the pair a moment after the namespace; one left after that
// is removed.
func deleteNetwork(ctx context.Context) error {
	if _, err := os.Stat(netnsPath()); err == nil {
		if out, err := exec.CommandContext(ctx, "ip", "netns", "delete", NetNS).CombinedOutput(); err != nil {
			return errors.Errorf("ip netns delete %s: %s", NetNS, strings.TrimSpace(string(out)))
		}
	}
	link := filepath.Join("/sys/class/net", hostLink)
	for range linkTrials {
		if _, err := os.Stat(link); os.IsNotExist(err) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := exec.CommandContext(ctx, "ip", "link", "delete", hostLink).CombinedOutput()
	if _, serr := os.Stat(link); err != nil && serr == nil {
		return errors.Errorf("ip link delete %s: %s", hostLink, strings.TrimSpace(string(out)))
	}
	return nil
}
