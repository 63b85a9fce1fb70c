// Package node runs a real single-node Kubernetes cluster on this machine:
// etcd, kube-apiserver, kube-controller-manager with every controller,
// kube-scheduler, containerd with runc and the CNI bridge, kubelet and
// kube-proxy. Everything runs inside a network namespace of its own, which
// has no route beyond this machine; the host reaches the API server and the
// node through one veth pair. Pods are real: their images are pulled or
// imported by containerd, and run by runc.
package node

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// The cluster's fixed names and networks. One cluster runs on a machine at
// a time (Start takes a lock), so a run killed without stopping can be
// found and removed by name at the next start.
const (
	// NetNS is the network namespace everything runs in.
	NetNS = "lambda-node"
	// hostLink is the host's end of the veth pair; the other end is eth0
	// inside NetNS.
	hostLink = "lambda-node0"
	// HostIP is the host's address on the veth pair.
	HostIP = "10.87.0.1"
	// NodeIP is the node's address, where the API server and the kubelet
	// listen, reachable from the host.
	NodeIP   = "10.87.0.2"
	linkCIDR = "10.87.0.0/30"
	// bridge connects the pods; its address is their gateway.
	bridge    = "cni0"
	bridgeIP  = "10.88.0.1"
	podCIDR   = "10.88.0.0/16"
	serviceIP = "10.96.0.1"
	// ServiceCIDR holds every Service's cluster IP.
	ServiceCIDR = "10.96.0.0/16"
	// DNSIP is the cluster DNS Service's address, which the kubelet gives
	// pods.
	DNSIP = "10.96.0.10"
	// NodeName is the node's name.
	NodeName = "lambda-node"
	// cgroupRoot holds every pod's cgroups, in each hierarchy.
	cgroupRoot = "lambda-node"
	apiPort    = 6443
	// Registry is the node's OCI registry, over plain HTTP, which pods,
	// containerd and the host reach.
	Registry = NodeIP + ":5000"
)

// Binaries the project builds (make node, make controlplane,
// make kube-controller-manager), in BinDir.
const (
	binEtcd      = "etcd"
	binAPIServer = "kube-apiserver"
	binKCM       = "kube-controller-manager"
	binScheduler = "kube-scheduler"
	binKubelet   = "kubelet"
	binProxy     = "kube-proxy"
	binRegistry  = "registry"
	// PauseImage is the tarball of the pod sandbox image (cmd/pause).
	PauseImage = "pause.tar"
)

// pauseRef is the reference the kubelet's sandboxes use, imported from
// PauseImage.
const pauseRef = "registry.k8s.io/pause:3.10"

const (
	errLocked    = "another local cluster runs from %s: stop it first"
	errFmtStart  = "cannot start %s"
	errFmtReady  = "%s did not become ready: its log is %s"
	errNodeReady = "the node did not become Ready and schedulable"
	errFmtImport = "cannot import %s into containerd"
)

// readyTimeout bounds each wait for a part of the cluster.
const readyTimeout = 2 * time.Minute

// Options of a cluster.
type Options struct {
	// BinDir holds the binaries the project builds and PauseImage.
	BinDir string
	// Knative installs Knative Serving, with kingress as its networking
	// layer, and Knative Eventing, from the images make knative assembles.
	Knative bool
	// Dir holds the cluster's state, certificates and logs (Dir/run/logs).
	// Dir/run is removed when the cluster stops, and what a killed run
	// left there by the next Start from the same Dir; empty means
	// DefaultDir.
	Dir string
}

// DefaultDir is the one folder of every cluster of this machine: a run
// killed without stopping leaves its mounts there, and the next run, from
// any checkout, removes them.
func DefaultDir() string { return filepath.Join(os.TempDir(), "lambda-node") }

// A Cluster is a running single-node cluster.
type Cluster struct {
	dir   string
	lock  *os.File
	procs []*process.Process
	// kube and http reach the API server as Config does.
	kube client.Client
	http *http.Client

	// Config authenticates as a cluster administrator, from the host.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig for Config.
	Kubeconfig string
}

// Start removes what a killed run from the same Dir left, then starts the
// cluster and waits until its node is Ready. On any failure it removes
// whatever it started.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Dir == "" {
		o.Dir = DefaultDir()
	}
	if err := os.MkdirAll(o.Dir, 0o750); err != nil {
		return nil, errors.Wrapf(err, errFmtStart, "the cluster")
	}
	lock, err := os.OpenFile(filepath.Join(o.Dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtStart, "the cluster")
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = lock.Close()
		return nil, errors.Errorf(errLocked, o.Dir)
	}
	c := &Cluster{dir: filepath.Join(o.Dir, "run"), lock: lock}
	if err := Sweep(c.dir); err != nil {
		_ = c.Stop()
		return nil, err
	}
	if err := c.start(ctx, o); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, o Options) error {
	bin, err := preflight(ctx, o.BinDir)
	if err != nil {
		return err
	}
	for _, d := range []string{"logs", "etcd", "kubelet", "cni/net.d", "cni/data", "containerd", "registry", "certs.d/" + Registry} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o750); err != nil {
			return errors.Wrapf(err, errFmtStart, "the cluster")
		}
	}
	if err := createNetwork(ctx); err != nil {
		return err
	}
	if err := makeCgroups(); err != nil {
		return err
	}
	f, err := writeFiles(c.dir)
	if err != nil {
		return err
	}
	c.Config, c.Kubeconfig = f.admin, f.kubeconfig(c.dir, "admin")
	if c.http, err = rest.HTTPClientFor(c.Config); err != nil {
		return errors.Wrapf(err, errFmtStart, "a client of the cluster")
	}
	if c.kube, err = client.New(c.Config, client.Options{HTTPClient: c.http}); err != nil {
		return errors.Wrapf(err, errFmtStart, "a client of the cluster")
	}
	for _, p := range c.plan(bin, f) {
		if err := c.run(p); err != nil {
			return err
		}
		if p.ready == nil {
			continue
		}
		if err := poll(ctx, p.ready); err != nil {
			return errors.Wrapf(err, errFmtReady, p.name, c.logPath(p.name))
		}
		if p.then != nil {
			if err := p.then(ctx); err != nil {
				return err
			}
		}
	}
	if err := poll(ctx, c.nodeReady); err != nil {
		return errors.Wrap(err, errNodeReady)
	}
	if err := c.installAddons(ctx, bin); err != nil || !o.Knative {
		return err
	}
	return c.installKnative(ctx, bin)
}

// A part is one process of the cluster: how it is run, and what says it is
// ready for the next to start.
type part struct {
	name  string
	bin   string
	args  []string
	ready func(context.Context) (bool, error)
	then  func(context.Context) error
}

// run starts a part inside the cluster's network namespace, its output in
// its log.
func (c *Cluster) run(p part) error {
	log, err := os.OpenFile(c.logPath(p.name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return errors.Wrapf(err, errFmtStart, p.name)
	}
	args := append([]string{"--net=" + netnsPath(), "--", p.bin}, p.args...)
	proc, err := process.Start(p.name, "nsenter", process.Options{Out: log}, args...)
	if err != nil {
		_ = log.Close()
		return err
	}
	c.procs = append(c.procs, proc)
	return nil
}

func (c *Cluster) logPath(name string) string {
	return filepath.Join(c.dir, "logs", name+".log")
}

// Stop stops every process of the cluster, then removes its pods, mounts,
// cgroups, network namespace and files.
func (c *Cluster) Stop() error {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop()
	}
	c.procs = nil
	err := Sweep(c.dir)
	if c.lock != nil {
		_ = c.lock.Close()
		c.lock = nil
	}
	return err
}

// poll calls ready every half second until it is true, its error, or the
// wait times out after readyTimeout.
func poll(ctx context.Context, ready func(context.Context) (bool, error)) error {
	return pollFor(ctx, readyTimeout, ready)
}

// pollFor is poll with a wait of its own.
func pollFor(ctx context.Context, wait time.Duration, ready func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for {
		ok, err := ready(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return errors.Wrap(errors.Join(ctx.Err(), last), "timed out")
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// healthy is true once the API server answers its readiness check.
func (c *Cluster) healthy(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Config.Host+"/readyz", nil)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, errors.Errorf("readyz: %s", resp.Status)
	}
	return true, nil
}

// nodeReady is true once the node is Ready and has no taint, which the node
// lifecycle controller lifts once it sees it Ready.
func (c *Cluster) nodeReady(ctx context.Context) (bool, error) {
	n := &corev1.Node{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: NodeName}, n); err != nil {
		return false, err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue && len(n.Spec.Taints) == 0, nil
		}
	}
	return false, nil
}
