package clients

import (
	"reflect"
	"sync"
)

// maxKept bounds how many values a kept table holds.
const maxKept = 64

// A kept table holds one copy of each value that many cached objects carry
// alike, so that they share it. Once it holds maxKept values it starts
// again: a value it no longer holds is kept anew the next time one is
// decoded. Sharing is safe only in the cache: reads get deep copies, and
// nothing writes to a cached object.
type kept[T any] struct {
	mu    sync.Mutex
	equal func(a, b T) bool
	items []T
}

// newKept is an empty table whose values are alike when equal says so; it
// must hold only for values of the same encoding, or the cache would hold a
// value other than the one the API server sent.
func newKept[T any](equal func(a, b T) bool) *kept[T] {
	return &kept[T]{equal: equal}
}

// shared is the value kept alike with v, which becomes v when none is. A
// nil pointer and an empty map or slice pass as they came, so that objects
// without the field do not fill the table.
func (k *kept[T]) shared(v T) T {
	if none(v) {
		return v
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, held := range k.items {
		if k.equal(held, v) {
			return held
		}
	}
	if len(k.items) == maxKept {
		clear(k.items)
		k.items = k.items[:0]
	}
	k.items = append(k.items, v)
	return v
}

// none is true of a nil pointer and of an empty map or slice.
func none[T any](v T) bool {
	r := reflect.ValueOf(v)
	switch r.Kind() { //nolint:exhaustive // Only these hold nothing to share.
	case reflect.Map, reflect.Slice:
		return r.Len() == 0
	case reflect.Pointer:
		return r.IsNil()
	}
	return false
}
