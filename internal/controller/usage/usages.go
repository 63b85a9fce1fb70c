// Package usage records which provider config each managed resource uses.
// The API server holds crossplane-runtime's ProviderConfigUsages, which
// keep a config in use from being deleted; the provider keeps only what it
// reads of them.
package usage

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const errNotListed = "provider config usages are not listed yet"

// DefaultSettle is how long a provider config's users may change before
// they are counted again. When 10,000 resources were created against one
// config, their usages' events, each asking at once, asked for 1,293
// counts, and as many writes of the config's status.
const DefaultSettle = time.Second

// A Config names a provider config: its kind and name, and its namespace
// when its kind is namespaced.
type Config struct {
	Namespace, Kind, Name string
}

// configOf is the config that a usage in namespace ns names by ref.
func configOf(ns string, ref xpv2.ProviderConfigReference) Config {
	if ref.Kind == v1alpha1.ClusterProviderConfigKind {
		ns = ""
	}
	return Config{Namespace: ns, Kind: ref.Kind, Name: ref.Name}
}

// A tally is what the record holds of one config.
type tally struct {
	Config
	// users are the usages that a resource controls; stale the others.
	users, stale int64
}

// A queue is a provider config controller's work queue.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Usages are a record of the provider's ProviderConfigUsages: which config
// each resource uses, how many resources use each config, and which usages
// no resource controls. A cache of the usages themselves kept some 800
// bytes for each resource, for as long as the provider runs, where the
// tracker asks only whether a resource's usage names its config, and a
// config's controller how many there are; the record keeps a pointer. It
// is filled by a reflector (see Start) and by the usages Track writes.
type Usages struct {
	// settle is how long a config's users may change before its controller
	// is asked to count them again.
	settle time.Duration
	// listed is closed once the reflector has listed every usage.
	listed     chan struct{}
	listedOnce sync.Once

	mu sync.Mutex
	// of are the configs the usages that a resource controls name, by the
	// usage's name: its resource's UID, unique in the cluster.
	of map[string]*tally
	// stale are the configs the usages no resource controls name, such as
	// those a restore stripped of their owners.
	stale   map[types.NamespacedName]*tally
	configs map[Config]*tally
	// queues are the config controllers', by kind.
	queues map[string]queue
}

// New returns an empty record whose configs' controllers are asked to
// count again settle after their users change.
func New(settle time.Duration) *Usages {
	return &Usages{
		settle:  settle,
		listed:  make(chan struct{}),
		of:      map[string]*tally{},
		stale:   map[types.NamespacedName]*tally{},
		configs: map[Config]*tally{},
		queues:  map[string]queue{},
	}
}

// wait returns once every usage has been listed, or ctx is done.
func (u *Usages) wait(ctx context.Context) error {
	select {
	case <-u.listed:
		return nil
	case <-ctx.Done():
		return errors.Wrap(ctx.Err(), errNotListed)
	}
}

// Users are how many resources use cfg, and the usages of cfg that no
// resource controls.
func (u *Usages) Users(ctx context.Context, cfg Config) (int64, []types.NamespacedName, error) {
	if err := u.wait(ctx); err != nil {
		return 0, nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	t := u.configs[cfg]
	if t == nil {
		return 0, nil, nil
	}
	var stale []types.NamespacedName
	for nn, s := range u.stale {
		if s == t {
			stale = append(stale, nn)
		}
	}
	return t.users, stale, nil
}

// holds is whether the record holds the usage ns/name.
func (u *Usages) holds(ns, name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.of[name]
	if !ok {
		_, ok = u.stale[types.NamespacedName{Namespace: ns, Name: name}]
	}
	return ok
}

// names is whether the usage a resource controls under name names cfg.
func (u *Usages) names(name string, cfg Config) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	t := u.of[name]
	return t != nil && t.Config == cfg
}

// put records the usage ns/name of cfg, controlled by a resource or not.
func (u *Usages) put(ns, name string, cfg Config, controlled bool) {
	u.mu.Lock()
	was := u.forget(ns, name)
	t := u.configs[cfg]
	if t == nil {
		t = &tally{Config: cfg}
		u.configs[cfg] = t
	}
	if controlled {
		t.users++
		u.of[name] = t
	} else {
		t.stale++
		u.stale[types.NamespacedName{Namespace: ns, Name: name}] = t
	}
	u.mu.Unlock()
	if was == nil || was.Config != cfg || was.controlled != controlled {
		u.wake(cfg)
		if was != nil && was.Config != cfg {
			u.wake(was.Config)
		}
	}
}

// remove forgets the usage ns/name.
func (u *Usages) remove(ns, name string) {
	u.mu.Lock()
	was := u.forget(ns, name)
	u.mu.Unlock()
	if was != nil {
		u.wake(was.Config)
	}
}

// A record is what the record held of one usage.
type record struct {
	Config
	controlled bool
}

// forget removes the usage ns/name, and returns what the record held of
// it. The caller holds mu.
func (u *Usages) forget(ns, name string) *record {
	if t, ok := u.of[name]; ok {
		delete(u.of, name)
		t.users--
		u.drop(t)
		return &record{Config: t.Config, controlled: true}
	}
	nn := types.NamespacedName{Namespace: ns, Name: name}
	if t, ok := u.stale[nn]; ok {
		delete(u.stale, nn)
		t.stale--
		u.drop(t)
		return &record{Config: t.Config}
	}
	return nil
}

// drop forgets t's config once no usage names it. The caller holds mu.
func (u *Usages) drop(t *tally) {
	if t.users == 0 && t.stale == 0 {
		delete(u.configs, t.Config)
	}
}

// wake asks cfg's controller to count its users, once they settle.
func (u *Usages) wake(cfg Config) {
	u.mu.Lock()
	q := u.queues[cfg.Kind]
	u.mu.Unlock()
	if q != nil {
		q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cfg.Namespace, Name: cfg.Name}}, u.settle)
	}
}

// putUsage records pcu as the API server holds it.
func (u *Usages) putUsage(pcu *v1alpha1.ProviderConfigUsage) {
	u.put(pcu.Namespace, pcu.Name, configOf(pcu.Namespace, pcu.ProviderConfigReference), metav1.GetControllerOf(pcu) != nil)
}
