package local

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// restartTimeout is how long a restarted process may take to let go of its
// address.
const restartTimeout = 30 * time.Second

const (
	errStart      = "cannot start the local control plane"
	errKubeconfig = "cannot write a kubeconfig for the local control plane"
	errStop       = "cannot stop the local control plane"
	errTempDir    = "cannot create the control plane's data folders"
	errRestart    = "cannot restart %s"
)

// Options of a local control plane.
type Options struct {
	// BinDir holds the etcd and kube-apiserver binaries. Empty means
	// BinDir().
	BinDir string

	// Port of kube-apiserver on 127.0.0.1; 0 picks a free one.
	Port int

	// DataDir is the parent of etcd's data folder. Empty means the system's
	// temporary folder.
	DataDir string

	// MinFreeBytes the data folder's file system must have; 0 means
	// MinFreeBytes.
	MinFreeBytes uint64

	// CRDs installed once the API server is up.
	CRDs []*extv1.CustomResourceDefinition

	// Out receives etcd's and kube-apiserver's logs; nil discards them.
	Out io.Writer

	// KubeletCAFile is the CA kube-apiserver trusts for kubelets' serving
	// certificates, so a played kubelet can serve pods' logs; empty trusts
	// none but the system's.
	KubeletCAFile string
}

// A ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	env         *envtest.Environment
	dataDir     string
	removeShims func()

	// Config authenticates as a cluster administrator.
	Config *rest.Config
}

// Start checks the options, starts etcd and kube-apiserver, and installs the
// CRDs. On any failure it stops whatever it started, so no process is left
// behind.
func Start(_ context.Context, o Options) (*ControlPlane, error) {
	if o.BinDir == "" {
		o.BinDir = BinDir()
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = MinFreeBytes
	}
	if o.DataDir == "" {
		o.DataDir = os.TempDir()
	}
	if err := checkBinaries(o.BinDir); err != nil {
		return nil, err
	}
	if err := checkPort(o.Port); err != nil {
		return nil, err
	}
	if err := checkDisk(o.DataDir, o.MinFreeBytes); err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp(o.DataDir, "lambda-controlplane-")
	if err != nil {
		return nil, errors.Wrap(err, errTempDir)
	}
	for _, d := range []string{"etcd", "apiserver"} {
		if err := os.Mkdir(filepath.Join(dataDir, d), 0o700); err != nil {
			_ = os.RemoveAll(dataDir)
			return nil, errors.Wrap(err, errTempDir)
		}
	}
	launchDir, removeShims, err := deathsigShims(o.BinDir)
	if err != nil {
		_ = os.RemoveAll(dataDir)
		return nil, err
	}

	env := &envtest.Environment{
		BinaryAssetsDirectory:    launchDir,
		CRDs:                     o.CRDs,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 60 * time.Second,
		// kube-apiserver drains requests for longer before it stops; a
		// restart need not wait for that.
		ControlPlaneStopTimeout: 5 * time.Second,
	}
	// Paths, not just the folder: envtest prefers $KUBEBUILDER_ASSETS over
	// its folder option, and these must be the binaries (or shims) chosen
	// here. Both keep their folders in ours, so a restarted API server
	// serves the same certificates and a restarted etcd the same data.
	etcd := &envtest.Etcd{DataDir: filepath.Join(dataDir, "etcd"), Path: filepath.Join(launchDir, BinaryEtcd)}
	env.ControlPlane.Etcd = etcd
	api := env.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(launchDir, BinaryKubeAPIServer)
	api.CertDir = filepath.Join(dataDir, "apiserver")
	if o.Port != 0 {
		api.Port = strconv.Itoa(o.Port)
	}
	if o.KubeletCAFile != "" {
		api.Configure().Set("kubelet-certificate-authority", o.KubeletCAFile)
	}
	if o.Out != nil {
		etcd.Out, etcd.Err = o.Out, o.Out
		api.Out, api.Err = o.Out, o.Out
	}

	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		_ = os.RemoveAll(dataDir)
		removeShims()
		return nil, errors.Wrap(err, errStart)
	}
	return &ControlPlane{env: env, dataDir: dataDir, removeShims: removeShims, Config: cfg}, nil
}

// WriteKubeconfig writes a kubeconfig for the administrator to path.
func (c *ControlPlane) WriteKubeconfig(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return errors.Wrap(err, errKubeconfig)
	}
	return errors.Wrap(os.WriteFile(path, c.env.KubeConfig, 0o600), errKubeconfig)
}

// RestartAPIServer stops kube-apiserver and starts it again on the same port
// with the same certificates, as a crash or an upgrade would.
func (c *ControlPlane) RestartAPIServer() error {
	api := c.env.ControlPlane.GetAPIServer()
	return restart("kube-apiserver", api.HostPort(), api.Stop, api.Start)
}

// RestartEtcd stops etcd and starts it again on the same data, while
// kube-apiserver keeps running.
func (c *ControlPlane) RestartEtcd() error {
	etcd := c.env.ControlPlane.Etcd
	return restart("etcd", etcd.URL.Host, etcd.Stop, etcd.Start)
}

// restart stops a process that serves addr and starts it again. A process
// that does not stop in time is killed, which is a restart too, so that is
// not an error, unless it never lets go of its address.
func restart(name, addr string, stop, start func() error) error {
	stopped := stop()
	deadline := time.Now().Add(restartTimeout)
	for {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
		if err == nil {
			_ = l.Close()
			break
		}
		if time.Now().After(deadline) {
			return errors.Wrapf(errors.Join(stopped, err), errRestart, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.Wrapf(start(), errRestart, name)
}

// Stop stops kube-apiserver and etcd and removes their data.
func (c *ControlPlane) Stop() error {
	err := c.env.Stop()
	_ = os.RemoveAll(c.dataDir)
	c.removeShims()
	return errors.Wrap(err, errStop)
}
