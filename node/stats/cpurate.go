package stats

import (
	"sync"
	"time"
)

// rateTTL is how long a CPU sample is kept after it was last updated.
const rateTTL = 5 * time.Minute

// cpuRates turns cumulative CPU times into rates (nanocores), one series per key (a container,
// sandbox or the node). It is safe for concurrent use.
type cpuRates struct {
	mu      sync.Mutex
	samples map[string]cpuSample
}

type cpuSample struct {
	at    time.Time // when the runtime or host took the sample
	usage uint64    // cumulative CPU time, ns
	rate  *uint64   // nanocores between the previous sample and this one
	seen  time.Time // last update, on the Provider's clock
}

func newCPURates() *cpuRates { return &cpuRates{samples: make(map[string]cpuSample)} }

// update records the sample (at, usage) of key and returns the rate since the previous sample,
// or nil if there was none or the series restarted (the usage went down). A sample no newer
// than the last one changes nothing and gets the last rate.
func (c *cpuRates) update(key string, at time.Time, usage uint64, now time.Time) *uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.samples[key]
	if ok && !at.After(prev.at) {
		prev.seen = now
		c.samples[key] = prev
		return clone(prev.rate)
	}
	cur := cpuSample{at: at, usage: usage, seen: now}
	if ok && usage >= prev.usage {
		r := uint64(float64(usage-prev.usage) / float64(at.Sub(prev.at)) * float64(time.Second))
		cur.rate = &r
	}
	c.samples[key] = cur
	return clone(cur.rate)
}

func clone(p *uint64) *uint64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// prune forgets series not updated within rateTTL before now.
func (c *cpuRates) prune(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range c.samples {
		if now.Sub(s.seen) > rateTTL {
			delete(c.samples, k)
		}
	}
}

// len is the number of series kept.
func (c *cpuRates) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.samples)
}
