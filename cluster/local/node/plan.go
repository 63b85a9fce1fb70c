package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// plan is the cluster's processes in the order they start. Each waits for
// what the next needs: containerd for its socket and the sandbox image
// imported, the API server for its readiness.
func (c *Cluster) plan(bin string, f files) []part {
	b := func(name string) string { return filepath.Join(bin, name) }
	kubeconfig := func(user string) string { return "--kubeconfig=" + f.kubeconfig(c.dir, user) }
	return []part{
		{
			name: binEtcd, bin: b(binEtcd),
			args: []string{
				"--data-dir=" + filepath.Join(c.dir, "etcd"),
				"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
				"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
				"--initial-cluster=default=http://127.0.0.1:2380", "--unsafe-no-fsync",
			},
		},
		{
			name: binRegistry, bin: b(binRegistry),
			args: []string{"--address=" + Registry, "--blobs=" + filepath.Join(c.dir, "registry")},
		},
		{
			name: "containerd", bin: "containerd", args: []string{"--config=" + f.containerd},
			ready: func(context.Context) (bool, error) {
				_, err := os.Stat(containerdSocket(c.dir))
				return err == nil, err
			},
			then: func(ctx context.Context) error { return c.importImage(ctx, b(PauseImage)) },
		},
		{
			name: binAPIServer, bin: b(binAPIServer),
			args: []string{
				"--etcd-servers=http://127.0.0.1:2379",
				"--bind-address=0.0.0.0", "--advertise-address=" + NodeIP, "--secure-port=" + strconv.Itoa(apiPort),
				"--tls-cert-file=" + f.serving, "--tls-private-key-file=" + f.servingKey, "--client-ca-file=" + f.ca,
				"--token-auth-file=" + f.tokens, "--authorization-mode=Node,RBAC",
				"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
				"--service-account-key-file=" + f.servingKey, "--service-account-signing-key-file=" + f.servingKey,
				"--service-cluster-ip-range=" + ServiceCIDR,
				"--kubelet-preferred-address-types=InternalIP",
				"--kubelet-client-certificate=" + f.kubeletClient, "--kubelet-client-key=" + f.kubeletClientKey,
				"--profiling=false",
			},
			ready: c.healthy,
		},
		{
			name: binKCM, bin: b(binKCM),
			args: []string{
				kubeconfig(binKCM), "--authentication-kubeconfig=" + f.kubeconfig(c.dir, binKCM), "--authorization-kubeconfig=" + f.kubeconfig(c.dir, binKCM),
				"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=true",
				"--service-account-private-key-file=" + f.servingKey, "--root-ca-file=" + f.ca,
				// The CNI plugin's own IPAM gives pods their addresses.
				"--controllers=*,-nodeipam",
			},
		},
		{
			name: binScheduler, bin: b(binScheduler),
			args: []string{
				kubeconfig(binScheduler), "--authentication-kubeconfig=" + f.kubeconfig(c.dir, binScheduler), "--authorization-kubeconfig=" + f.kubeconfig(c.dir, binScheduler),
				"--leader-elect=false", "--secure-port=0",
			},
		},
		{
			name: binKubelet, bin: b(binKubelet),
			args: []string{
				"--config=" + f.kubelet, kubeconfig(binKubelet), "--root-dir=" + filepath.Join(c.dir, "kubelet"),
				"--hostname-override=" + NodeName, "--node-ip=" + NodeIP,
			},
		},
		{
			name: binProxy, bin: b(binProxy), args: []string{"--config=" + f.proxy},
		},
	}
}

// importImage imports an image tarball into containerd's namespace for
// Kubernetes, as if pulled.
func (c *Cluster) importImage(ctx context.Context, tarball string) error {
	out, err := exec.CommandContext(ctx, "ctr", "--address="+containerdSocket(c.dir), "--namespace=k8s.io", "images", "import", tarball).CombinedOutput()
	return errors.Wrapf(errors.Wrap(err, strings.TrimSpace(string(out))), errFmtImport, filepath.Base(tarball))
}

// makeCgroups makes the pods' cgroup root in every hierarchy, which the
// kubelet requires to exist.
func makeCgroups() error {
	hierarchies, err := os.ReadDir(cgroupFS)
	if err != nil {
		return errors.Wrap(err, "cannot read the cgroup hierarchies")
	}
	for _, h := range hierarchies {
		if err := os.MkdirAll(filepath.Join(cgroupFS, h.Name(), cgroupRoot), 0o750); err != nil {
			return errors.Wrapf(err, "cannot make cgroup %s", filepath.Join(h.Name(), cgroupRoot))
		}
	}
	return nil
}
