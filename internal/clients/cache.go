package clients

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const (
	errKubeconfig          = "cannot use the kubeconfig of the provider config"
	errNewClient           = "cannot create a client for the target cluster"
	errStopped             = "the client of the target cluster was stopped before it was used; trying again"
	errFmtConnecting       = "still connecting to the target cluster at %s (an attempt may take up to %s); trying again later"
	errFmtNamespaceTargets = "the kubeconfig Secrets of namespace %s already have %d target clusters connected or connecting, the most one namespace may; a target client nobody uses is stopped after %s"
	errFmtNamespaceTries   = "namespace %s is already connecting to %d target clusters, the most one namespace may at once; trying again later"
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
	// DefaultMaxTargetsPerNamespace is how many target clients the
	// kubeconfig Secrets of one namespace may have running or being made.
	DefaultMaxTargetsPerNamespace = 8
	// DefaultMaxTriesPerNamespace is how many target clients of one
	// namespace may be being made at once.
	DefaultMaxTriesPerNamespace = 2
	// DefaultConnectWait is how long a reconcile waits for a target client
	// being made; the attempt goes on without it, and a later reconcile
	// takes its client.
	DefaultConnectWait = 3 * time.Second
	// DefaultConnectTimeout is how long one attempt to make a target client
	// may take: reaching the API server and filling the caches.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultRetryAfter is how long a failed attempt's error answers every
	// reconcile that asks, before another attempt starts.
	DefaultRetryAfter = 10 * time.Second
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

// A NewClientFn makes a client for a target cluster, within ctx, whose
// informers run until run is done.
type NewClientFn func(ctx, run context.Context, cfg *rest.Config) (Target, error)

// A Cache hands out one client per credential set. A client per reconcile
// costs memory, CPU and discovery calls for nothing (provider-kubernetes
// issue #541); a client kept forever costs informers for every kubeconfig
// ever seen. So a client is stopped when the Secret it was made from
// changes, when nobody asked for it for a while, and when more are running
// than the cache holds.
//
// A target cluster is named by a team's Secret, so it may be slow or never
// answer. A client is made outside the cache's lock, by one attempt per
// credential set that no reconcile waits on for long, and one namespace may
// have only so many clients and attempts: a target costs the team that
// named it time, and nobody else anything.
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
	// perNamespace and triesPerNamespace bound the clients and attempts of
	// one namespace's Secrets.
	perNamespace, triesPerNamespace int
	// wait, timeout and retryAfter bound an attempt: how long a reconcile
	// waits for it, how long it may take, and how long its failure stands.
	wait, timeout, retryAfter time.Duration

	mu sync.Mutex
	// ctx ends every target's informers when the cache stops.
	ctx    context.Context
	cancel context.CancelFunc
	remote map[[sha256.Size]byte]*target
	// tries are the attempts under way, and the failed ones for
	// retryAfter.
	tries map[[sha256.Size]byte]*try
	// secrets are the credential set each Secret held when last read.
	secrets map[string][sha256.Size]byte
}

// A target is one running target client.
type target struct {
	client   Target
	stop     context.CancelFunc
	lastUsed time.Time
	// namespace of the Secret it was first made for.
	namespace string
	// secrets that hold its credentials.
	secrets map[string]bool
}

// A try is one attempt to make a target client.
type try struct {
	namespace, host string
	// done is closed when the attempt ended; err and failed are set then.
	done   chan struct{}
	err    error
	failed time.Time
}

// ended is true once the attempt is over.
func (t *try) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// A CacheOption changes a Cache.
type CacheOption func(*Cache)

// WithLocalFollow sets the local target's Followed kinds to what follow
// returns, once the local target is first asked for.
func WithLocalFollow(follow func() map[string]bool) CacheOption {
	return func(c *Cache) { c.followLocal = follow }
}

// NewCache returns a cache whose InjectedIdentity client is local and whose
// target clusters are dialled through dial.
func NewCache(local Target, newClient NewClientFn, dial source.DialContextFn, o ...CacheOption) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		local: local, newClient: newClient, dial: dial,
		idle: DefaultIdle, max: DefaultMaxTargets, now: time.Now,
		perNamespace: DefaultMaxTargetsPerNamespace, triesPerNamespace: DefaultMaxTriesPerNamespace,
		wait: DefaultConnectWait, timeout: DefaultConnectTimeout, retryAfter: DefaultRetryAfter,
		ctx: ctx, cancel: cancel,
		remote: map[[sha256.Size]byte]*target{}, tries: map[[sha256.Size]byte]*try{}, secrets: map[string][sha256.Size]byte{},
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

// For returns the client of a provider config's target cluster. A client
// being made is waited for within ctx, and at most the cache's wait: a
// reconcile that gives up is told to try again, and the attempt goes on.
func (c *Cache) For(ctx context.Context, cfg Config) (Target, error) {
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
	now := c.now()
	c.release(now, cfg.Secret, key)
	if kc, ok := c.use(now, cfg.Secret, key); ok {
		c.mu.Unlock()
		return kc, nil
	}
	t, err := c.attempt(cfg, key)
	c.mu.Unlock()
	if err != nil {
		return Target{}, err
	}
	timer := time.NewTimer(c.wait)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
		return Target{}, errors.Errorf(errFmtConnecting, t.host, c.timeout)
	case <-ctx.Done():
		return Target{}, errors.Errorf(errFmtConnecting, t.host, c.timeout)
	}
	if t.err != nil {
		return Target{}, t.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kc, ok := c.use(c.now(), cfg.Secret, key); ok {
		return kc, nil
	}
	return Target{}, errors.New(errStopped)
}

// use returns the running client of key, as used by secret now.
func (c *Cache) use(now time.Time, secret string, key [sha256.Size]byte) (Target, bool) {
	t, ok := c.remote[key]
	if !ok {
		return Target{}, false
	}
	t.lastUsed = now
	t.secrets[secret] = true
	return t.client, true
}

// attempt returns the attempt to make key's client: the one under way or
// failed within retryAfter, or a new one, if the namespace of cfg's Secret
// may start one.
func (c *Cache) attempt(cfg Config, key [sha256.Size]byte) (*try, error) {
	if t, ok := c.tries[key]; ok {
		return t, nil
	}
	rc, err := TargetConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, errors.Wrap(err, errKubeconfig)
	}
	ns, _, _ := strings.Cut(cfg.Secret, "/")
	targets, tries := 0, 0
	for _, t := range c.remote {
		if t.namespace == ns {
			targets++
		}
	}
	for _, t := range c.tries {
		if t.namespace == ns && !t.ended() {
			tries++
		}
	}
	switch {
	case targets+tries >= c.perNamespace:
		return nil, errors.Errorf(errFmtNamespaceTargets, ns, c.perNamespace, c.idle)
	case tries >= c.triesPerNamespace:
		return nil, errors.Errorf(errFmtNamespaceTries, ns, c.triesPerNamespace)
	}
	rc.Dial = c.dial
	t := &try{namespace: ns, host: rc.Host, done: make(chan struct{})}
	c.tries[key] = t
	go c.make(t, rc, cfg.Secret, key)
	return t, nil
}

// make runs one attempt to make a target client, within the cache's
// timeout, and keeps the client it made.
func (c *Cache) make(t *try, rc *rest.Config, secret string, key [sha256.Size]byte) {
	ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
	defer cancel()
	run, stop := context.WithCancel(c.ctx)
	kc, err := c.newClient(ctx, run, rc)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(t.done)
	if err != nil {
		stop()
		t.err, t.failed = errors.Wrap(err, errNewClient), c.now()
		return
	}
	delete(c.tries, key)
	if len(c.remote) >= c.max {
		c.stopLeastRecentlyUsed()
	}
	c.remote[key] = &target{client: kc, stop: stop, lastUsed: c.now(), namespace: t.namespace, secrets: map[string]bool{secret: true}}
}

// release stops the clients nobody asked for within the idle time, and the
// one a Secret held before it changed to key, unless another Secret holds
// the same credentials; and forgets failed attempts older than retryAfter.
func (c *Cache) release(now time.Time, secret string, key [sha256.Size]byte) {
	for k, t := range c.remote {
		if now.Sub(t.lastUsed) > c.idle {
			c.stop(k)
		}
	}
	for k, t := range c.tries {
		if t.ended() && now.Sub(t.failed) > c.retryAfter {
			delete(c.tries, k)
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
