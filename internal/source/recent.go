package source

import (
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// Bounds of what a Recent keeps.
const (
	// DefaultFresh is how long a resolved identity is used without asking
	// the server again: a resource that builds or deploys is polled every
	// few seconds, and would list its source at each poll.
	DefaultFresh = 30 * time.Second
	// maxRecent is the most identities kept; the oldest go first.
	maxRecent = 4096
)

// A Recent keeps what a source resolved to a moment ago, by source and
// credentials, and answers the same until it is no longer fresh. It keeps
// identities and refusals a user must act on; an unreachable server is
// asked again at the next poll.
type Recent struct {
	fresh time.Duration
	now   func() time.Time

	mu   sync.Mutex
	seen map[[sha256.Size]byte]resolved
}

type resolved struct {
	id  string
	err error
	at  time.Time
}

// NewRecent keeps identities for fresh, reading the time from now.
func NewRecent(fresh time.Duration, now func() time.Time) *Recent {
	return &Recent{fresh: fresh, now: now, seen: map[[sha256.Size]byte]resolved{}}
}

// recentKey identifies a source and the credentials it is read with,
// without keeping either.
func recentKey(src v1alpha1.FunctionSource, secret map[string][]byte) [sha256.Size]byte {
	h := sha256.New()
	b, _ := json.Marshal(src) //nolint:errchkjson // Spec types always marshal.
	h.Write(b)
	for _, k := range slices.Sorted(maps.Keys(secret)) {
		h.Write([]byte{0})
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write(secret[k])
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// get returns what a source resolved to while it is fresh.
func (r *Recent) get(k [sha256.Size]byte) (resolved, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.seen[k]
	if !ok || r.now().Sub(v.at) >= r.fresh {
		return resolved{}, false
	}
	return v, true
}

// put keeps what a source resolved to, dropping what is stale and, when
// full, the oldest.
func (r *Recent) put(k [sha256.Size]byte, id string, err error) {
	if err != nil && !IsUnresolvable(err) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if len(r.seen) >= maxRecent {
		var oldest [sha256.Size]byte
		var at time.Time
		for key, v := range r.seen {
			if now.Sub(v.at) >= r.fresh {
				delete(r.seen, key)
			} else if at.IsZero() || v.at.Before(at) {
				oldest, at = key, v.at
			}
		}
		if len(r.seen) >= maxRecent {
			delete(r.seen, oldest)
		}
	}
	r.seen[k] = resolved{id: id, err: err, at: now}
}
