package workload

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Notes are a value noted for each of some resources of one kind, until it
// is taken.
type notes[V any] struct {
	mu  sync.Mutex
	set map[types.NamespacedName]V
}

func newNotes[V any]() *notes[V] { return &notes[V]{set: map[types.NamespacedName]V{}} }

// add notes v for the resource, in place of what was noted.
func (n *notes[V]) add(r types.NamespacedName, v V) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.set[r] = v
}

// keep returns what was noted for the resource, and notes v when nothing
// was.
func (n *notes[V]) keep(r types.NamespacedName, v V) V {
	n.mu.Lock()
	defer n.mu.Unlock()
	if was, ok := n.set[r]; ok {
		return was
	}
	n.set[r] = v
	return v
}

// get returns what was noted for the resource, if anything.
func (n *notes[V]) get(r types.NamespacedName) (V, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, ok := n.set[r]
	return v, ok
}

// has is whether something is noted for the resource.
func (n *notes[V]) has(r types.NamespacedName) bool {
	_, ok := n.get(r)
	return ok
}

// take returns what was noted for the resource, if anything, and forgets it.
// A map keeps the room it once grew to: emptied, it is replaced, so that
// notes a rush of new resources left behind give their room back.
func (n *notes[V]) take(r types.NamespacedName) (V, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, ok := n.set[r]
	if ok {
		delete(n.set, r)
		if len(n.set) == 0 {
			n.set = map[types.NamespacedName]V{}
		}
	}
	return v, ok
}
