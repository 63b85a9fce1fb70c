package clients

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const (
	errKubeconfig = "cannot use the kubeconfig of the provider config"
	errNewClient  = "cannot create a client for the target cluster"
)

// Bounds of the target clients a Cache keeps.
const (
	// DefaultIdle is how long a target client nobody asked for is kept. Every
	// resource asks at each poll, so only a client no resource uses any more
	// stays unused this long.
	DefaultIdle = 10 * time.Minute
	// DefaultMaxTargets is how many target clients run at once; the least
	// recently used one is stopped to make room.
	DefaultMaxTargets = 64
)

// A Target is how the provider reaches one target cluster.
type Target struct {
	// Client reads from informers, which see only the provider's own
	// Jobs, pods, ConfigMaps and NetworkPolicies.
	client.Client
	// Uncached reads from the API server, for what informers cannot
	// answer: whether an object that is not the provider's exists.
	Uncached client.Reader
	// Followed are the kinds whose informers FollowOwned set up: Client
	// finds their objects by IndexOwner, or by name, and they wake their
	// resources.
	Followed map[string]bool
}

// A NewClientFn makes a client for a target cluster whose informers run
// until ctx is done.
type NewClientFn func(ctx context.Context, cfg *rest.Config) (Target, error)

// A Cache hands out one client per credential set. A client per reconcile
// costs memory, CPU and discovery calls for nothing (provider-kubernetes
// issue #541); a client kept forever costs informers for every kubeconfig
// ever seen. So a client is stopped when the Secret it was made from
// changes, when nobody asked for it for a while, and when more are running
// than the cache holds.
type Cache struct {
	// local is the cluster the provider runs in.
	local Target
	// followLocal follows local's informers, once local is first used: a
	// provider that only reaches other clusters keeps no informers of its
	// own cluster's Services.
	followLocal func() map[string]bool
	localOnce   sync.Once
	// newClient makes a client for a kubeconfig's cluster.
	newClient NewClientFn
	// dial connects to every target cluster a kubeconfig names.
	dial source.DialContextFn
	idle time.Duration
	max  int
	now  func() time.Time

	mu sync.Mutex
	// ctx ends every target's informers when the cache stops.
	ctx    context.Context
	cancel context.CancelFunc
	remote map[[sha256.Size]byte]*target
	// secrets are the credential set each Secret held when last read.
	secrets map[string][sha256.Size]byte
}

// A target is one running target client.
type target struct {
	client   Target
	stop     context.CancelFunc
	lastUsed time.Time
	// secrets that hold its credentials.
	secrets map[string]bool
}

// A CacheOption changes a Cache.
type CacheOption func(*Cache)

// WithIdle stops a target client nobody asked for in d.
func WithIdle(d time.Duration) CacheOption { return func(c *Cache) { c.idle = d } }

// WithMaxTargets keeps at most n target clients running.
func WithMaxTargets(n int) CacheOption { return func(c *Cache) { c.max = n } }

// WithLocalFollow sets the local target's Followed kinds to what follow
// returns, once the local target is first asked for.
func WithLocalFollow(follow func() map[string]bool) CacheOption {
	return func(c *Cache) { c.followLocal = follow }
}

// WithClock reads the time from now.
func WithClock(now func() time.Time) CacheOption { return func(c *Cache) { c.now = now } }

// NewCache returns a cache whose InjectedIdentity client is local and whose
// target clusters are dialled through dial.
func NewCache(local Target, newClient NewClientFn, dial source.DialContextFn, o ...CacheOption) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		local: local, newClient: newClient, dial: dial,
		idle: DefaultIdle, max: DefaultMaxTargets, now: time.Now,
		ctx: ctx, cancel: cancel,
		remote: map[[sha256.Size]byte]*target{}, secrets: map[string][sha256.Size]byte{},
	}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Start stops every target client when ctx is done, so a manager that runs
// the cache stops the informers with itself.
func (c *Cache) Start(ctx context.Context) error {
	<-ctx.Done()
	c.cancel()
	return nil
}

// running is how many target clients run.
func (c *Cache) running() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.remote)
}

// For returns the client of a provider config's target cluster.
func (c *Cache) For(cfg Config) (Target, error) {
	if cfg.Kubeconfig == nil {
		c.localOnce.Do(func() {
			if c.followLocal != nil {
				c.local.Followed = c.followLocal()
			}
		})
		return c.local, nil
	}
	key := sha256.Sum256(cfg.Kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.release(now, cfg.Secret, key)
	if t, ok := c.remote[key]; ok {
		t.lastUsed = now
		t.secrets[cfg.Secret] = true
		return t.client, nil
	}
	rc, err := TargetConfig(cfg.Kubeconfig)
	if err != nil {
		return Target{}, errors.Wrap(err, errKubeconfig)
	}
	rc.Dial = c.dial
	if len(c.remote) >= c.max {
		c.stopLeastRecentlyUsed()
	}
	ctx, stop := context.WithCancel(c.ctx)
	kc, err := c.newClient(ctx, rc)
	if err != nil {
		stop()
		return Target{}, errors.Wrap(err, errNewClient)
	}
	c.remote[key] = &target{client: kc, stop: stop, lastUsed: now, secrets: map[string]bool{cfg.Secret: true}}
	return kc, nil
}

// release stops the clients nobody asked for within the idle time, and the
// one a Secret held before it changed to key, unless another Secret holds
// the same credentials.
func (c *Cache) release(now time.Time, secret string, key [sha256.Size]byte) {
	for k, t := range c.remote {
		if now.Sub(t.lastUsed) > c.idle {
			c.stop(k)
		}
	}
	was, ok := c.secrets[secret]
	c.secrets[secret] = key
	if !ok || was == key {
		return
	}
	if t, ok := c.remote[was]; ok {
		delete(t.secrets, secret)
		if len(t.secrets) == 0 {
			c.stop(was)
		}
	}
}

// stopLeastRecentlyUsed makes room for one more client.
func (c *Cache) stopLeastRecentlyUsed() {
	var (
		oldest [sha256.Size]byte
		at     time.Time
	)
	for k, t := range c.remote {
		if at.IsZero() || t.lastUsed.Before(at) {
			oldest, at = k, t.lastUsed
		}
	}
	c.stop(oldest)
}

// stop ends a target client's informers and forgets it.
func (c *Cache) stop(key [sha256.Size]byte) {
	t, ok := c.remote[key]
	if !ok {
		return
	}
	t.stop()
	delete(c.remote, key)
	for s := range t.secrets {
		if c.secrets[s] == key {
			delete(c.secrets, s)
		}
	}
}
