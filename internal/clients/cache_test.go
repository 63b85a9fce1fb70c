package clients

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
// stopped. Clients of hosts in tarpit are made only once their attempt is
// over: their servers never answer.
type clientLog struct {
	mu      sync.Mutex
	made    map[string]int
	running map[client.Client]context.Context
	tarpit  map[string]bool
}

func newClientLog(tarpit ...string) *clientLog {
	l := &clientLog{made: map[string]int{}, running: map[client.Client]context.Context{}, tarpit: map[string]bool{}}
	for _, h := range tarpit {
		l.tarpit["https://"+h+":6443"] = true
	}
	return l
}

func (l *clientLog) newClient(ctx, run context.Context, cfg *rest.Config) (Target, error) {
	l.mu.Lock()
	l.made[cfg.Host]++
	l.mu.Unlock()
	if l.tarpit[cfg.Host] {
		<-ctx.Done()
		return Target{}, ctx.Err()
	}
	c := fake.NewClientBuilder().Build()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[c] = run
	return Target{Client: c, Uncached: c}, nil
}

func (l *clientLog) madeFor(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made["https://"+host+":6443"]
}

func (l *clientLog) stopped(c Target) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running[c.Client].Err() != nil
}

func TestCacheOneClientPerCredentials(t *testing.T) {
	kc := fake.NewClientBuilder().Build()
	local := Target{Client: kc, Uncached: kc}
	l := newClientLog()
	c := NewCache(local, l.newClient, nil)
	if got, err := c.For(context.Background(), Config{}); err != nil || got.Client != local.Client {
		t.Errorf("InjectedIdentity: got %v, %v; want the provider's own client", got, err)
	}
	a1, err := c.For(context.Background(), Config{Kubeconfig: kubeconfigFor("a.example.com"), Secret: "ns/a/kubeconfig"})
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := c.For(context.Background(), Config{Kubeconfig: kubeconfigFor("a.example.com"), Secret: "ns/a/kubeconfig"})
	b, _ := c.For(context.Background(), Config{Kubeconfig: kubeconfigFor("b.example.com"), Secret: "ns/b/kubeconfig"})
	if a1.Client != a2.Client {
		t.Error("the same kubeconfig got a second client; want the cached one")
	}
	if a1.Client == b.Client {
		t.Error("two clusters share one client")
	}
	if l.madeFor("a.example.com") != 1 || l.madeFor("b.example.com") != 1 {
		t.Errorf("clients made per cluster: %v; want one each", l.made)
	}
	if _, err := c.For(context.Background(), Config{Kubeconfig: []byte("not a kubeconfig: ["), Secret: "ns/c/kubeconfig"}); err == nil {
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
		kc, err := c.For(context.Background(), Config{Kubeconfig: kubeconfigFor(host), Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return kc
	}

	t.Run("SecretChanges", func(t *testing.T) {
		l := newClientLog()
		c := NewCache(Target{}, l.newClient, nil, withClock(clock))
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
		c := NewCache(Target{}, l.newClient, nil, withClock(clock), withIdle(time.Minute))
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
		c := NewCache(Target{}, l.newClient, nil, withClock(clock), withMaxTargets(2))
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

// TestCacheTarpit plays a team whose kubeconfig names a server that takes
// connections and never answers. Before, the cache held its lock while it
// made the client, without a deadline, so every reconcile of every team that
// asked for any target waited behind it. Now a reconcile waits for the
// attempt at most the cache's wait, no second attempt starts for the same
// kubeconfig, other targets are handed out meanwhile, and the attempt ends at
// the cache's timeout with an error that stands for retryAfter.
func TestCacheTarpit(t *testing.T) {
	l := newClientLog("tarpit.example.com")
	const wait, timeout, retry = 100 * time.Millisecond, 400 * time.Millisecond, time.Hour
	c := NewCache(Target{}, l.newClient, nil, withConnect(wait, timeout, retry))
	tarpit := Config{Kubeconfig: kubeconfigFor("tarpit.example.com"), Secret: "team-a/pc/kubeconfig"}
	ctx := context.Background()
	for range 3 {
		start := time.Now()
		_, err := c.For(ctx, tarpit)
		if err == nil || !strings.Contains(err.Error(), "still connecting to the target cluster at https://tarpit.example.com:6443") {
			t.Fatalf("For(tarpit): %v; want still connecting", err)
		}
		if took := time.Since(start); took > timeout {
			t.Errorf("For(tarpit) took %s; want about the %s wait", took, wait)
		}
	}
	if n := l.madeFor("tarpit.example.com"); n != 1 {
		t.Errorf("%d attempts to connect to the tarpit; want one under way", n)
	}
	other := Config{Kubeconfig: kubeconfigFor("b.example.com"), Secret: "team-b/pc/kubeconfig"}
	if _, err := c.For(ctx, other); err != nil {
		t.Errorf("another team's target while the tarpit is being connected: %v", err)
	}
	time.Sleep(timeout + wait)
	_, err := c.For(ctx, tarpit)
	if err == nil || !strings.Contains(err.Error(), errNewClient) {
		t.Errorf("For(tarpit) after the attempt's timeout: %v; want the attempt's failure", err)
	}
	if n := l.madeFor("tarpit.example.com"); n != 1 {
		t.Errorf("%d attempts to connect to the tarpit within retryAfter; want one", n)
	}
}

// TestCacheNamespaceLimits checks that the Secrets of one namespace can
// have only so many target clients running or being made, and so many
// attempts under way, while another namespace's are not held back.
func TestCacheNamespaceLimits(t *testing.T) {
	ctx := context.Background()
	get := func(c *Cache, host, ns string) error {
		_, err := c.For(ctx, Config{Kubeconfig: kubeconfigFor(host), Secret: ns + "/" + host + "/kubeconfig"})
		return err
	}
	t.Run("Tries", func(t *testing.T) {
		l := newClientLog("t1.example.com", "t2.example.com", "t3.example.com")
		c := NewCache(Target{}, l.newClient, nil, withConnect(200*time.Millisecond, time.Hour, time.Hour), withNamespaceLimits(8, 2))
		for _, h := range []string{"t1", "t2"} {
			if err := get(c, h+".example.com", "team-a"); err == nil || !strings.Contains(err.Error(), "still connecting") {
				t.Fatalf("%s: %v; want still connecting", h, err)
			}
		}
		err := get(c, "t3.example.com", "team-a")
		if err == nil || !strings.Contains(err.Error(), "namespace team-a is already connecting to 2 target clusters") {
			t.Errorf("a third attempt of one namespace: %v; want refused", err)
		}
		if n := l.madeFor("t3.example.com"); n != 0 {
			t.Errorf("the refused attempt dialled %d times", n)
		}
		if err := get(c, "b.example.com", "team-b"); err != nil {
			t.Errorf("another namespace's target: %v", err)
		}
	})
	t.Run("Targets", func(t *testing.T) {
		l := newClientLog()
		c := NewCache(Target{}, l.newClient, nil, withNamespaceLimits(2, 2))
		for _, h := range []string{"a1", "a2"} {
			if err := get(c, h+".example.com", "team-a"); err != nil {
				t.Fatal(err)
			}
		}
		err := get(c, "a3.example.com", "team-a")
		if err == nil || !strings.Contains(err.Error(), "namespace team-a already have 2 target clusters") {
			t.Errorf("a third target of one namespace: %v; want refused", err)
		}
		if err := get(c, "a1.example.com", "team-a"); err != nil {
			t.Errorf("a target the namespace has: %v", err)
		}
		if err := get(c, "b.example.com", "team-b"); err != nil {
			t.Errorf("another namespace's target: %v", err)
		}
	})
}

// withIdle stops a target client nobody asked for in d.
func withIdle(d time.Duration) CacheOption { return func(c *Cache) { c.idle = d } }

// withMaxTargets keeps at most n target clients running.
func withMaxTargets(n int) CacheOption { return func(c *Cache) { c.max = n } }

// withNamespaceLimits lets the Secrets of one namespace have at most
// targets clients running or being made, and tries attempts at once.
func withNamespaceLimits(targets, tries int) CacheOption {
	return func(c *Cache) { c.perNamespace, c.triesPerNamespace = targets, tries }
}

// withConnect has a reconcile wait at most wait for a client being made,
// an attempt take at most timeout, and a failed one answer for retryAfter.
func withConnect(wait, timeout, retryAfter time.Duration) CacheOption {
	return func(c *Cache) { c.wait, c.timeout, c.retryAfter = wait, timeout, retryAfter }
}

// withClock reads the time from now.
func withClock(now func() time.Time) CacheOption { return func(c *Cache) { c.now = now } }
