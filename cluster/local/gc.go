package local

import (
	"io"
	"os"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

// BinaryKubeControllerManager runs the garbage collector; make
// kube-controller-manager builds it beside etcd and kube-apiserver.
const BinaryKubeControllerManager = "kube-controller-manager"

const errFmtNoGC = "cannot find %s: run make kube-controller-manager, which builds it into .cache/bin"

// StartGarbageCollector runs kube-controller-manager with only its garbage
// collector, against the control plane of kubeconfig: it deletes what an
// owner reference ties to a deleted object (a Job's pods, a managed
// resource's ProviderConfigUsage) and finishes foreground deletions, as in
// a real cluster. binDir holds the binary; empty means BinDir.
func StartGarbageCollector(binDir, kubeconfig string, out io.Writer) (*process.Process, error) {
	if binDir == "" {
		binDir = BinDir()
	}
	bin, err := filepath.Abs(filepath.Join(binDir, BinaryKubeControllerManager))
	if err != nil {
		return nil, errors.Wrapf(err, errFmtNoGC, BinaryKubeControllerManager)
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, errors.Wrapf(err, errFmtNoGC, BinaryKubeControllerManager)
	}
	return process.Start(BinaryKubeControllerManager, bin, process.Options{Env: []string{"KUBECONFIG=" + kubeconfig}, Out: out},
		"--kubeconfig="+kubeconfig, "--controllers=garbagecollector", "--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false")
}
