package clients

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

// kubeconfig is a kubeconfig with one cluster, user and context, whose
// cluster and user carry the given fields besides the server.
func kubeconfig(server, clusterFields, userFields string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: target, cluster: {server: "` + server + `"` + clusterFields + `}}]
users: [{name: team, user: {` + userFields + `}}]
contexts: [{name: target, context: {cluster: target, user: team}}]
current-context: target
`)
}

func TestTargetConfigRefuses(t *testing.T) {
	const server = "https://target.example.com:6443"
	cases := map[string]struct {
		reason string
		kc     []byte
		want   string
	}{
		"Exec": {
			reason: "A credential plugin runs a command inside the provider's pod.",
			kc:     kubeconfig(server, "", `exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: ["-c", "id"], interactiveMode: Never}`),
			want:   `user "team" sets exec`,
		},
		"AuthProvider": {
			reason: "An auth provider plugin runs inside the provider.",
			kc:     kubeconfig(server, "", `auth-provider: {name: oidc, config: {idp-issuer-url: "https://issuer.example.com"}}`),
			want:   `user "team" sets auth-provider`,
		},
		"TokenFile": {
			reason: "A token file would send the provider's own service account token.",
			kc:     kubeconfig(server, "", `tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token`),
			want:   `user "team" sets tokenFile`,
		},
		"ClientCertificate": {
			reason: "A client certificate path reads a file of the provider's pod.",
			kc:     kubeconfig(server, "", `client-certificate: /etc/ssl/private/cert.pem, client-key-data: a2V5`),
			want:   `user "team" sets client-certificate`,
		},
		"ClientKey": {
			reason: "A client key path reads a file of the provider's pod.",
			kc:     kubeconfig(server, "", `client-certificate-data: Y2VydA==, client-key: /etc/ssl/private/key.pem`),
			want:   `user "team" sets client-key`,
		},
		"CertificateAuthority": {
			reason: "A CA path reads a file of the provider's pod.",
			kc:     kubeconfig(server, ", certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt", `token: t`),
			want:   `cluster "target" sets certificate-authority`,
		},
		"Proxy": {
			reason: "A proxy sends the provider's requests through a host of the tenant's choosing.",
			kc:     kubeconfig(server, ", proxy-url: http://attacker.example.com:3128", `token: t`),
			want:   `cluster "target" sets proxy-url`,
		},
		"TwoUsers": {
			reason: "More than one user leaves which one is used to the current context.",
			kc: []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: a, user: {token: t}}, {name: b, user: {token: u}}]
contexts: [{name: x, context: {cluster: c, user: a}}]
current-context: x
`),
			want: "2 users",
		},
		"TwoContexts": {
			reason: "More than one context neither.",
			kc: []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: a, user: {token: t}}]
contexts: [{name: one, context: {cluster: c, user: a}}, {name: two, context: {cluster: c, user: a}}]
current-context: one
`),
			want: "2 contexts",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := TargetConfig(tc.kc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nTargetConfig(...): %v; want an error naming %q", tc.reason, err, tc.want)
			}
		})
	}
	rc, err := TargetConfig(kubeconfig(server, ", certificate-authority-data: Y2E=", `token: t`))
	if err != nil || rc.Host != server || rc.BearerToken != "t" {
		t.Errorf("an inline kubeconfig: %v, %v; want its server and token", rc, err)
	}
}

// A manager stands in for the controller manager: only its rate and logger
// are read.
type manager struct{}

func (manager) GetConfig() *rest.Config { return &rest.Config{QPS: 10, Burst: 20} }

// TestRefusedKubeconfigReachesNothing gives the cache kubeconfigs a tenant
// could write, each naming a real server that counts its connections: none
// may reach it, and no plugin may run. The control, a loopback server the
// provider is told it may reach, shows the server would have seen one.
func TestRefusedKubeconfigReachesNothing(t *testing.T) {
	var accepted atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.1"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	marker := filepath.Join(t.TempDir(), "plugin-ran")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("the-provider's-own-token"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Names resolve as a hostile DNS zone would have them; whatever the
	// dialer lets through reaches the test's server.
	lookup := func(_ context.Context, host string) ([]net.IPAddr, error) {
		ip := map[string]string{"metadata.lambda.test": "169.254.169.254", "imds6.lambda.test": "fd00:ec2::254"}[host]
		if ip == "" {
			ip = host
		}
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	toServer := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	insecure := ", insecure-skip-tls-verify: true"
	at := func(host string) string { return "https://" + net.JoinHostPort(host, port) }

	cases := map[string]struct {
		reason string
		kc     []byte
		allow  []netip.Prefix
		want   string
		reach  bool
	}{
		"Exec": {
			reason: "A credential plugin is refused before anything runs or is dialled.",
			kc:     kubeconfig(at("127.0.0.1"), insecure, `exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: ["-c", "touch `+marker+`"], interactiveMode: Never}`),
			allow:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			want:   "exec",
		},
		"TokenFile": {
			reason: "The provider's token file is refused before anything is dialled.",
			kc:     kubeconfig(at("127.0.0.1"), insecure, `tokenFile: `+token),
			allow:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			want:   "tokenFile",
		},
		"Loopback": {
			reason: "Inline credentials, but the server is the provider's own loopback.",
			kc:     kubeconfig(at("127.0.0.1"), insecure, `token: t`),
			want:   "refusing to connect to 127.0.0.1",
		},
		"Metadata": {
			reason: "Inline credentials, but the server's name resolves to the metadata service.",
			kc:     kubeconfig(at("metadata.lambda.test"), insecure, `token: t`),
			want:   "refusing to connect to metadata.lambda.test (169.254.169.254)",
		},
		"MetadataV6": {
			reason: "AWS's IPv6 metadata address neither.",
			kc:     kubeconfig(at("imds6.lambda.test"), insecure, `token: t`),
			want:   "refusing to connect to imds6.lambda.test (fd00:ec2::254)",
		},
		"AllowedLoopback": {
			reason: "The control: a loopback server a platform admin allowed is reached.",
			kc:     kubeconfig(at("127.0.0.1"), insecure, `token: t`),
			allow:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			reach:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := accepted.Load()
			dial := source.RefusingDialer(lookup, toServer, source.Policy{Allow: tc.allow})
			c := NewCache(Target{}, TargetClients(manager{}, Owned{}, logging.NewNopLogger()), dial)
			defer c.cancel()
			_, err := c.For(context.Background(), Config{Kubeconfig: tc.kc, Secret: "team/target/kubeconfig"})
			reached := accepted.Load() > before
			if reached != tc.reach {
				t.Errorf("\n%s\nthe server saw a connection: %t; want %t", tc.reason, reached, tc.reach)
			}
			if tc.reach {
				// The server is only a version endpoint, so what comes
				// after reaching it may fail; the dialer must not.
				if err != nil && strings.Contains(err.Error(), "refusing") {
					t.Errorf("\n%s\nFor(...): %v; want the server reached", tc.reason, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nFor(...): %v; want an error naming %q", tc.reason, err, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("\n%s\nthe credential plugin ran", tc.reason)
			}
		})
	}
}
