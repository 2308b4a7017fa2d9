package kubeletapi

import (
	"sync"
	"time"
)

// ttlCache holds review results for a while. It is safe for concurrent
// use. It holds at most max entries: when full, expired entries are swept,
// and if none had expired an arbitrary one is dropped, so a flood of
// distinct tokens costs reviews, not memory.
type ttlCache[V any] struct {
	now func() time.Time
	max int

	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](now func() time.Time, max int) *ttlCache[V] {
	return &ttlCache[V]{now: now, max: max, entries: make(map[string]ttlEntry[V])}
}

// get returns the value under key if it has not expired.
func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put stores v under key for ttl.
func (c *ttlCache[V]) put(key string, v V, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			for k := range c.entries {
				delete(c.entries, k)
				break
			}
		}
	}
	c.entries[key] = ttlEntry[V]{v: v, expires: now.Add(ttl)}
}
