package node

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/rest"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

const errFiles = "cannot write the cluster's certificates and configuration"

// Users of the API server, each with a token of its own; the default RBAC
// bindings of Kubernetes name them, and the Node authorizer the kubelet.
var users = map[string]struct{ user, groups string }{
	"admin":      {user: "admin", groups: "system:masters"},
	binKCM:       {user: "system:kube-controller-manager"},
	binScheduler: {user: "system:kube-scheduler"},
	binProxy:     {user: "system:kube-proxy"},
	binKubelet:   {user: "system:node:" + NodeName, groups: "system:nodes"},
}

// files are the paths of what writeFiles wrote, and the administrator's
// config.
type files struct {
	ca, serving, servingKey, kubeletClient, kubeletClientKey string
	tokens, containerd, kubelet, proxy                       string
	admin                                                    *rest.Config
}

// kubeconfig is the path of the kubeconfig of one of users.
func (f files) kubeconfig(dir, user string) string {
	return filepath.Join(dir, user+".kubeconfig")
}

// writeFiles writes the cluster's CA and certificates, a token and a
// kubeconfig for each of users, and the configuration of containerd, the CNI
// bridge, the kubelet and kube-proxy. The certificates are the run's own:
// a new CA each start.
func writeFiles(dir string) (files, error) {
	p := func(name string) string { return filepath.Join(dir, name) }
	f := files{
		ca: p("ca.pem"), serving: p("apiserver.pem"), servingKey: p("apiserver-key.pem"),
		kubeletClient: p("kubelet-client.pem"), kubeletClientKey: p("kubelet-client-key.pem"),
		tokens: p("tokens.csv"), containerd: p("containerd.toml"), kubelet: p("kubelet.yaml"), proxy: p("kube-proxy.yaml"),
	}
	ca, err := testca.New("lambda-node CA")
	if err != nil {
		return f, errors.Wrap(err, errFiles)
	}
	serving, servingKey, err := ca.IssueFor(x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		IPAddresses: []net.IP{net.ParseIP(NodeIP), net.ParseIP(serviceIP), net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return f, errors.Wrap(err, errFiles)
	}
	// The API server's client to kubelets, for logs and exec; the kubelet
	// asks the API server whether system:masters may.
	client, clientKey, err := ca.IssueFor(x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return f, errors.Wrap(err, errFiles)
	}
	tokens := map[string]string{}
	csv := ""
	for name, u := range users {
		t, err := token()
		if err != nil {
			return f, errors.Wrap(err, errFiles)
		}
		tokens[name] = t
		csv += fmt.Sprintf("%s,%s,%s,%s\n", t, u.user, u.user, strconv.Quote(u.groups))
	}
	f.admin = &rest.Config{Host: "https://" + net.JoinHostPort(NodeIP, strconv.Itoa(apiPort)), BearerToken: tokens["admin"], TLSClientConfig: rest.TLSClientConfig{CAData: ca.PEM}}
	write := map[string][]byte{
		f.ca: ca.PEM, f.serving: serving, f.servingKey: servingKey, f.kubeletClient: client, f.kubeletClientKey: clientKey,
		f.tokens:     []byte(csv),
		f.containerd: []byte(containerdConfig(dir)),
		f.kubelet:    []byte(kubeletConfig(dir, f.ca)),
		f.proxy:      []byte(proxyConfig(f.kubeconfig(dir, binProxy))),
		filepath.Join(dir, "cni", "net.d", "10-bridge.conflist"): []byte(bridgeConfig(dir)),
		filepath.Join(dir, "certs.d", Registry, "hosts.toml"):    []byte(registryHosts()),
	}
	for name, t := range tokens {
		write[f.kubeconfig(dir, name)] = []byte(kubeconfig(f.admin.Host, ca.PEM, t))
	}
	for path, b := range write {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return f, errors.Wrap(err, errFiles)
		}
	}
	return f, nil
}

// token is a new random bearer token.
func token() (string, error) {
	b := make([]byte, 24)
	_, err := rand.Read(b)
	return hex.EncodeToString(b), err
}

func kubeconfig(server string, ca []byte, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: lambda-node
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: user
  user: {token: %s}
contexts:
- name: lambda-node
  context: {cluster: lambda-node, user: user}
current-context: lambda-node
`, server, base64.StdEncoding.EncodeToString(ca), token)
}

// containerdConfig keeps containerd's files, socket and the pods' network
// namespaces below dir, so Sweep finds all of them, and pulls from the
// node's registry by registryHosts. Without
// restrict_oom_score_adj no pod starts here: root lacks CAP_SYS_RESOURCE,
// and runc may not lower a sandbox's OOM score.
func containerdConfig(dir string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[5]q
    conf_dir = %[6]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
`, filepath.Join(dir, "containerd", "root"), filepath.Join(dir, "containerd", "state"), containerdSocket(dir),
		pauseRef, cniPluginsPath, filepath.Join(dir, "cni", "net.d"), filepath.Join(dir, "certs.d"))
}

// registryHosts tells containerd to pull from the node's registry over
// plain HTTP.
func registryHosts() string {
	return fmt.Sprintf(`server = "http://%[1]s"
[host."http://%[1]s"]
  capabilities = ["pull", "resolve", "push"]
`, Registry)
}

func containerdSocket(dir string) string { return filepath.Join(dir, "containerd.sock") }

// bridgeConfig puts pods on the bridge, with addresses of podCIDR kept
// below dir.
func bridgeConfig(dir string) string {
	return fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "lambda-node", "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
`, bridge, filepath.Join(dir, "cni", "data"), podCIDR, bridgeIP)
}

// kubeletConfig is the kubelet's configuration for this host: cgroup v1
// (a hybrid hierarchy) with the cgroupfs driver, pods' cgroups below
// cgroupRoot, and no eviction for a disk the host shares with everything
// else.
func kubeletConfig(dir, ca string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /%[1]s
containerRuntimeEndpoint: unix://%[2]s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[3]q}
authorization: {mode: Webhook}
clusterDNS: [%[4]s]
clusterDomain: cluster.local
resolvConf: ""
failSwapOn: false
enforceNodeAllocatable: []
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, cgroupRoot, containerdSocket(dir), ca, DNSIP)
}

// proxyConfig runs kube-proxy's iptables mode without touching the host's
// conntrack settings, which it may not change here.
func proxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: %q
hostnameOverride: %q
clientConnection: {kubeconfig: %q}
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
`, podCIDR, NodeName, kubeconfig)
}
