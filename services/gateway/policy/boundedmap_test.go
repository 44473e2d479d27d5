package policy

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// TestFullMapEvictsTheLeastRecentlyUsedEntry: a full map makes room for a
// new key by dropping one entry, one that was not used since the others
// were, and keeps everything else.
func TestFullMapEvictsTheLeastRecentlyUsedEntry(t *testing.T) {
	m := newBoundedMap[string, int](3)
	for i, k := range []string{"a", "b", "c"} {
		m.put(k, i)
	}
	m.get("a")
	m.get("c")
	m.put("d", 3) // b is the least recently used
	if _, ok := m.get("b"); ok {
		t.Error("b, the least recently used entry, is still there")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := m.get(k); !ok {
			t.Errorf("%s is gone", k)
		}
	}
	// Every entry was just used: the hand clears their marks and still
	// makes room.
	m.put("e", 4)
	if _, ok := m.get("e"); !ok || m.len() != 3 {
		t.Errorf("e present %t, %d entries; want true, 3", ok, m.len())
	}
}

// TestHotEntrySurvivesAFloodOfOneOffKeys: keys seen once (an attacker
// spraying distinct arguments) do not push out an entry that is in use,
// however many of them come.
func TestHotEntrySurvivesAFloodOfOneOffKeys(t *testing.T) {
	const size = 64
	for _, every := range []int{1, 8, size / 2} {
		t.Run(fmt.Sprintf("used every %d keys", every), func(t *testing.T) {
			m := newBoundedMap[string, int](size)
			m.put("hot", -1)
			for i := range 100 * size {
				m.put("one-off "+strconv.Itoa(i), i)
				if i%every == 0 {
					if v, ok := m.get("hot"); !ok || v != -1 {
						t.Fatalf("after %d one-off keys: hot entry %d, %t", i+1, v, ok)
					}
				}
			}
			if n := m.len(); n != size {
				t.Errorf("%d entries, want %d", n, size)
			}
		})
	}
}

// TestBoundedMapUpdatesInPlace: putting a key again replaces its value
// and takes no more room.
func TestBoundedMapUpdatesInPlace(t *testing.T) {
	m := newBoundedMap[string, int](2)
	m.put("a", 1)
	m.put("a", 2)
	m.put("b", 3)
	if v, ok := m.get("a"); !ok || v != 2 || m.len() != 2 {
		t.Errorf("a = %d, %t; %d entries", v, ok, m.len())
	}
}

// TestBoundedMapConcurrentUse: under -race, readers and writers share the
// map; every value read is the one written for its key, and the map never
// holds more than its size.
func TestBoundedMapConcurrentUse(t *testing.T) {
	const size = 32
	m := newBoundedMap[int, string](size)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i*7 + g) % (3 * size)
				if v, ok := m.get(k); ok && v != strconv.Itoa(k) {
					t.Errorf("key %d holds %q", k, v)
					return
				}
				if i%3 == g%3 {
					m.put(k, strconv.Itoa(k))
				}
			}
		})
	}
	wg.Wait()
	if n := m.len(); n > size {
		t.Errorf("%d entries, size %d", n, size)
	}
}

// clearingMap is the map the engines used before boundedMap: it emptied
// itself when full. Kept for BenchmarkRememberedLookup's comparison.
type clearingMap[K comparable, V any] struct {
	mu  sync.RWMutex
	m   map[K]V
	max int
}

func (c *clearingMap[K, V]) get(key K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *clearingMap[K, V]) put(key K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[key] = v
}

// BenchmarkRememberedLookup: a remembered plan looked up, as every read
// does, in boundedMap and in the map it replaced, one caller at a time and
// from 16 at once (all on one hot key, and spread over 64).
func BenchmarkRememberedLookup(b *testing.B) {
	var keys []staticKey
	for i := range 64 {
		in := read()
		in.Tool = fmt.Sprintf("ha_tool_%d", i)
		k, _ := in.staticKey()
		keys = append(keys, k)
	}
	type lookup interface {
		get(staticKey) (plan, bool)
		put(staticKey, plan)
	}
	maps := []struct {
		name string
		m    lookup
	}{
		{"clearing", &clearingMap[staticKey, plan]{m: map[staticKey]plan{}, max: maxPlans}},
		{"bounded", newBoundedMap[staticKey, plan](maxPlans)},
	}
	for _, mc := range maps {
		for _, k := range keys {
			mc.m.put(k, plan{constant: true})
		}
		b.Run(mc.name+"/sequential", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, ok := mc.m.get(keys[i%len(keys)]); !ok {
					b.Fatal("miss")
				}
				i++
			}
		})
		for _, spread := range []int{1, len(keys)} {
			b.Run(fmt.Sprintf("%s/parallel16-keys%d", mc.name, spread), func(b *testing.B) {
				b.SetParallelism(8) // × 2 cores
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						if _, ok := mc.m.get(keys[i%spread]); !ok {
							b.Error("miss")
							return
						}
						i++
					}
				})
			})
		}
	}
}
