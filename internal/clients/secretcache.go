package clients

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultSecretFreshness is how long a provider config's Secret, once read,
// answers for the API server's copy. A rotated or deleted kubeconfig takes
// effect within it; until then every reconcile of every resource that uses
// the config would read the Secret again.
const DefaultSecretFreshness = 30 * time.Second

// A SecretCache reads Secrets with a GET, never a list or a watch, and
// keeps what it read for its freshness, so a steady state reads each Secret
// a provider config names once per freshness instead of once per reconcile.
// Everything else it reads through. A Secret that is not found is not kept:
// a resource held until it exists sees it at its next poll.
type SecretCache struct {
	client.Reader
	fresh time.Duration
	now   func() time.Time

	mu      sync.Mutex
	secrets map[types.NamespacedName]readSecret
}

// A readSecret is a Secret as it was read, and when.
type readSecret struct {
	secret *corev1.Secret
	at     time.Time
}

// NewSecretCache reads through r, keeping Secrets for fresh.
func NewSecretCache(r client.Reader, fresh time.Duration) *SecretCache {
	return &SecretCache{Reader: r, fresh: fresh, now: time.Now, secrets: map[types.NamespacedName]readSecret{}}
}

// Get answers a Secret read within its freshness from what was read, and
// reads everything else from the Reader.
func (c *SecretCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return c.Reader.Get(ctx, key, obj, opts...)
	}
	now := c.now()
	c.mu.Lock()
	r, ok := c.secrets[key]
	c.mu.Unlock()
	if ok && now.Sub(r.at) < c.fresh {
		r.secret.DeepCopyInto(s)
		return nil
	}
	if err := c.Reader.Get(ctx, key, s, opts...); err != nil {
		c.mu.Lock()
		delete(c.secrets, key)
		c.mu.Unlock()
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// What is no longer fresh is read again when asked: drop it now, so
	// Secrets no config names any more are not kept.
	for k, r := range c.secrets {
		if now.Sub(r.at) >= c.fresh {
			delete(c.secrets, k)
		}
	}
	c.secrets[key] = readSecret{secret: s.DeepCopy(), at: now}
	return nil
}
