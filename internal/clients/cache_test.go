package clients

import (
	"context"
	"fmt"
	"testing"
	"time"

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

func kubeconfigFor(host string) []byte { return []byte(fmt.Sprintf(kubeconfigFmt, host)) }

// A clientLog records the target clients a cache made and which of them it
// stopped.
type clientLog struct {
	made    map[string]int
	running map[client.Client]context.Context
}

func newClientLog() *clientLog {
	return &clientLog{made: map[string]int{}, running: map[client.Client]context.Context{}}
}

func (l *clientLog) newClient(ctx context.Context, cfg *rest.Config) (Target, error) {
	l.made[cfg.Host]++
	c := fake.NewClientBuilder().Build()
	l.running[c] = ctx
	return Target{Client: c, Uncached: c}, nil
}

func (l *clientLog) stopped(c Target) bool { return l.running[c.Client].Err() != nil }

func TestCacheOneClientPerCredentials(t *testing.T) {
	kc := fake.NewClientBuilder().Build()
	local := Target{Client: kc, Uncached: kc}
	l := newClientLog()
	c := NewCache(local, l.newClient, nil)
	if got, err := c.For(Config{}); err != nil || got.Client != local.Client {
		t.Errorf("InjectedIdentity: got %v, %v; want the provider's own client", got, err)
	}
	a1, err := c.For(Config{Kubeconfig: kubeconfigFor("a.example.com"), Secret: "ns/a/kubeconfig"})
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := c.For(Config{Kubeconfig: kubeconfigFor("a.example.com"), Secret: "ns/a/kubeconfig"})
	b, _ := c.For(Config{Kubeconfig: kubeconfigFor("b.example.com"), Secret: "ns/b/kubeconfig"})
	if a1.Client != a2.Client {
		t.Error("the same kubeconfig got a second client; want the cached one")
	}
	if a1.Client == b.Client {
		t.Error("two clusters share one client")
	}
	if l.made["https://a.example.com:6443"] != 1 || l.made["https://b.example.com:6443"] != 1 {
		t.Errorf("clients made per cluster: %v; want one each", l.made)
	}
	if _, err := c.For(Config{Kubeconfig: []byte("not a kubeconfig: ["), Secret: "ns/c/kubeconfig"}); err == nil {
		t.Error("a broken kubeconfig got a client")
	}
}

// TestCacheReleases checks that a target client's informers are stopped
// when the Secret it was made from changes, when nobody asked for it for the
// idle time, and when the cache is full; before, every distinct kubeconfig
// added informers that ran for ever.
func TestCacheReleases(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	get := func(t *testing.T, c *Cache, host, secret string) Target {
		t.Helper()
		kc, err := c.For(Config{Kubeconfig: kubeconfigFor(host), Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return kc
	}

	t.Run("SecretChanges", func(t *testing.T) {
		l := newClientLog()
		c := NewCache(Target{}, l.newClient, nil, WithClock(clock))
		old := get(t, c, "a.example.com", "ns/edge/kubeconfig")
		shared := get(t, c, "a.example.com", "other/edge/kubeconfig")
		if old.Client != shared.Client {
			t.Fatal("two Secrets holding one kubeconfig got two clients")
		}
		get(t, c, "b.example.com", "ns/edge/kubeconfig")
		if l.stopped(old) {
			t.Error("a client was stopped while another Secret still holds its kubeconfig")
		}
		get(t, c, "c.example.com", "other/edge/kubeconfig")
		if !l.stopped(old) {
			t.Error("no Secret holds the old kubeconfig any more, but its client runs on")
		}
		if got := c.running(); got != 2 {
			t.Errorf("%d clients run; want the 2 the Secrets hold now", got)
		}
	})

	t.Run("Idle", func(t *testing.T) {
		l := newClientLog()
		c := NewCache(Target{}, l.newClient, nil, WithClock(clock), WithIdle(time.Minute))
		unused := get(t, c, "a.example.com", "ns/a/kubeconfig")
		used := get(t, c, "b.example.com", "ns/b/kubeconfig")
		now = now.Add(50 * time.Second)
		get(t, c, "b.example.com", "ns/b/kubeconfig")
		now = now.Add(20 * time.Second)
		get(t, c, "b.example.com", "ns/b/kubeconfig")
		if !l.stopped(unused) {
			t.Error("a client nobody asked for in 70 s of a 60 s idle time runs on")
		}
		if l.stopped(used) {
			t.Error("a client asked for 20 s ago was stopped")
		}
	})

	t.Run("Full", func(t *testing.T) {
		l := newClientLog()
		c := NewCache(Target{}, l.newClient, nil, WithClock(clock), WithMaxTargets(2))
		oldest := get(t, c, "a.example.com", "ns/a/kubeconfig")
		now = now.Add(time.Second)
		get(t, c, "b.example.com", "ns/b/kubeconfig")
		now = now.Add(time.Second)
		get(t, c, "a.example.com", "ns/a/kubeconfig")
		now = now.Add(time.Second)
		get(t, c, "c.example.com", "ns/c/kubeconfig")
		if got := c.running(); got != 2 {
			t.Errorf("%d clients run; want at most 2", got)
		}
		if l.stopped(oldest) {
			t.Error("the most recently used client was stopped to make room")
		}
	})

	t.Run("Stop", func(t *testing.T) {
		l := newClientLog()
		c := NewCache(Target{}, l.newClient, nil)
		kc := get(t, c, "a.example.com", "ns/a/kubeconfig")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = c.Start(ctx); close(done) }()
		cancel()
		<-done
		if !l.stopped(kc) {
			t.Error("the cache stopped, but a target client's informers run on")
		}
	})
}
