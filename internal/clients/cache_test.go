package clients

import (
	"fmt"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const kubeconfigFmt = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

func TestCacheOneClientPerCredentials(t *testing.T) {
	local := fake.NewClientBuilder().Build()
	made := map[string]int{}
	c := NewCache(local, func(cfg *rest.Config) (client.Client, error) {
		made[cfg.Host]++
		return fake.NewClientBuilder().Build(), nil
	})
	kc := func(host string) []byte { return []byte(fmt.Sprintf(kubeconfigFmt, host)) }

	if got, err := c.For(Config{}); err != nil || got != local {
		t.Errorf("InjectedIdentity: got %v, %v; want the provider's own client", got, err)
	}
	a1, err := c.For(Config{Kubeconfig: kc("a.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := c.For(Config{Kubeconfig: kc("a.example.com")})
	b, _ := c.For(Config{Kubeconfig: kc("b.example.com")})
	if a1 != a2 {
		t.Error("the same kubeconfig got a second client; want the cached one")
	}
	if a1 == b {
		t.Error("two clusters share one client")
	}
	if made["https://a.example.com:6443"] != 1 || made["https://b.example.com:6443"] != 1 {
		t.Errorf("clients made per cluster: %v; want one each", made)
	}
	if _, err := c.For(Config{Kubeconfig: []byte("not a kubeconfig: [")}); err == nil {
		t.Error("a broken kubeconfig got a client")
	}
}
