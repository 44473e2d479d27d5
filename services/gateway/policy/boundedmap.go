package policy

import (
	"sync"
	"sync/atomic"
)

// boundedMap is a map of at most max entries, safe for concurrent use. A
// full map makes room by CLOCK (second chance): the hand passes over the
// entries in turn, clears the mark of one used since its last pass and
// replaces the first one that was not. Entries in use stay; keys seen once
// go first, so a flood of one-off keys cannot push out what every client
// keeps asking for. A hit only reads under the read lock and sets a mark,
// so hits do not queue behind each other as they would to reorder an LRU
// list.
type boundedMap[K comparable, V any] struct {
	mu    sync.RWMutex
	index map[K]int // key -> slot
	slots []slot[K, V]
	hand  int // the slot eviction looks at next
	max   int
}

type slot[K comparable, V any] struct {
	key   K
	value V
	// used is set by hits, under the read lock, and cleared by the hand.
	used atomic.Bool
}

func newBoundedMap[K comparable, V any](size int) *boundedMap[K, V] {
	return &boundedMap[K, V]{index: map[K]int{}, max: max(size, 1)}
}

func (m *boundedMap[K, V]) get(key K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i, ok := m.index[key]
	if !ok {
		var zero V
		return zero, false
	}
	s := &m.slots[i]
	// Written only when it changes, so a hot entry's cache line is not
	// written by every hit.
	if !s.used.Load() {
		s.used.Store(true)
	}
	return s.value, true
}

func (m *boundedMap[K, V]) put(key K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, ok := m.index[key]; ok {
		m.slots[i].value = v
		m.slots[i].used.Store(true)
		return
	}
	if len(m.slots) < m.max {
		m.index[key] = len(m.slots)
		m.slots = append(m.slots, slot[K, V]{key: key, value: v})
		return
	}
	// Ends within two turns: the first clears every mark.
	for {
		s := &m.slots[m.hand]
		i := m.hand
		m.hand = (m.hand + 1) % len(m.slots)
		if s.used.Load() {
			s.used.Store(false)
			continue
		}
		delete(m.index, s.key)
		s.key, s.value = key, v
		m.index[key] = i
		return
	}
}

func (m *boundedMap[K, V]) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.index)
}
