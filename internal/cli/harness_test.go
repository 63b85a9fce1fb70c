package cli_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
	"github.com/knative-lambda/provider-knative-lambda/internal/cli"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

var update = flag.Bool("update", false, "Write the golden files instead of comparing with them.")

// The control plane, with the platform's CRDs as Crossplane makes them, and
// a played kubelet whose CA kube-apiserver trusts, for pods' logs.
var (
	controlPlane = &local.Shared{}
	kubelet      *playact.Kubelet
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kubectl-lambda-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir) //nolint:errcheck // A temporary folder.
	ca, err := testca.New("played kubelet CA")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	caFile := filepath.Join(dir, "kubelet-ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if kubelet, err = playact.StartKubelet(ca); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kubelet.Close()
	crds, err := local.PlatformCRDs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	controlPlane.Options = local.Options{KubeletCAFile: caFile, CRDs: crds}
	return controlPlane.Run(m)
}

// A scene is a namespace of the control plane and a kubeconfig whose
// context is the cluster's administrator, as kubectl would read it.
type scene struct {
	kube       client.Client
	kubeconfig string
	namespace  string
}

func newScene(ctx context.Context, t *testing.T) scene {
	t.Helper()
	cfg := controlPlane.Config(t)
	c := testkit.Client(t, cfg)
	return scene{kube: c, kubeconfig: writeKubeconfig(t, cfg), namespace: testkit.Namespace(ctx, t, c, "kubectl-lambda-", "")}
}

// writeKubeconfig writes a kubeconfig of a REST config.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin"}
	kc.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlLambda runs the plugin's command with the scene's kubeconfig and
// namespace, at a time, and returns what it wrote to standard output and
// its error.
func (s scene) kubectlLambda(ctx context.Context, now time.Time, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := cli.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func() time.Time { return now })
	cmd.SetArgs(append([]string{"--kubeconfig=" + s.kubeconfig, "--namespace=" + s.namespace}, args...))
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}
