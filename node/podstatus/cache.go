package podstatus

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/actors"
)

// Cache is the node's view of its pods' statuses. It is safe for concurrent
// use; see the package documentation for what it guarantees.
type Cache struct {
	clk     clock.PassiveClock
	m       *metrics
	created time.Time

	mu      sync.Mutex
	pods    map[string]*entry
	subs    map[uint64]chan struct{}
	nextSub uint64
}

var _ actors.StatusSink = (*Cache)(nil)

// entry is what the Cache holds for one UID. pod is never changed once
// stored; a newer status replaces the entry's pod.
type entry struct {
	seq   uint64
	pod   *corev1.Pod // nil: an orphan
	share share
	// startObserved: the pod start duration was observed (or deliberately
	// skipped) for this UID.
	startObserved bool
}

// New returns an empty Cache and registers its metrics on reg (a nil reg
// registers nothing). Like prometheus.MustRegister, it panics if reg already
// holds collectors with the same names. A nil clk is the real clock.
func New(reg prometheus.Registerer, clk clock.PassiveClock) *Cache {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Cache{
		clk:     clk,
		m:       newMetrics(reg),
		created: clk.Now(),
		pods:    make(map[string]*entry),
		subs:    make(map[uint64]chan struct{}),
	}
}

// PodStatus stores u's pod (a deep copy) unless the Cache holds a status
// with the same or a newer Seq for u.UID; a Removed update forgets the UID.
// It implements actors.StatusSink and never blocks for longer than a map
// update.
func (c *Cache) PodStatus(u actors.PodUpdate) {
	var pod *corev1.Pod
	if !u.Removed && u.Pod != nil {
		pod = u.Pod.DeepCopy() // outside the lock: the copy is the slow part
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.pods[u.UID]
	if u.Removed {
		if old == nil {
			return
		}
		c.m.add(old.share, -1)
		delete(c.pods, u.UID)
		c.notifyLocked()
		return
	}
	if old != nil && u.Seq <= old.seq {
		return
	}

	e := &entry{seq: u.Seq, pod: pod, share: shareOf(pod)}
	if old != nil {
		c.m.add(old.share, -1)
		e.startObserved = old.startObserved
	}
	c.m.add(e.share, +1)
	if !e.startObserved && started(pod) {
		e.startObserved = true
		// AcceptedAt before this Cache existed: the pod was accepted by an
		// earlier run and is only being replayed; its start is not news.
		if !u.AcceptedAt.IsZero() && !u.AcceptedAt.Before(c.created) {
			c.m.observeStart(c.clk.Since(u.AcceptedAt))
		}
	}
	c.pods[u.UID] = e
	c.notifyLocked()
}

// List returns deep copies of the pods, sorted by namespace, name and UID.
// Orphans are left out.
func (c *Cache) List() []*corev1.Pod {
	c.mu.Lock()
	pods := make([]*corev1.Pod, 0, len(c.pods))
	for _, e := range c.pods {
		if e.pod != nil {
			pods = append(pods, e.pod)
		}
	}
	c.mu.Unlock()

	// Stored pods are never changed, so they can be copied without the lock.
	for i, p := range pods {
		pods[i] = p.DeepCopy()
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.UID, b.UID),
		)
	})
	return pods
}

// Get returns a deep copy of the pod with the given UID; false if the Cache
// holds no pod for it (unknown, removed, or an orphan).
func (c *Cache) Get(uid string) (*corev1.Pod, bool) {
	c.mu.Lock()
	e := c.pods[uid]
	c.mu.Unlock()
	if e == nil || e.pod == nil {
		return nil, false
	}
	return e.pod.DeepCopy(), true
}
