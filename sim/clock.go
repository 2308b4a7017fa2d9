package sim

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
)

// Clock is one simulated node's virtual clock and its only scheduler: every
// timer of the node (its simulated runtime's container exits, its pod
// shells' timers, RPC replies in flight, its share of the workload, its
// crashes) is an event in one queue, run in order of time, one at a time,
// in the goroutine that runs the node. Events due at the same instant run
// in an order drawn from the node's seeded random source, so that a seed
// picks one of the interleavings a real node could see, and the same seed
// the same one. Nodes share nothing, so each has its own clock and they
// can run side by side (Sim.Run) without changing any node's run.
//
// It implements clock.WithTickerAndDelayedExecution, so the real code under
// test (the simulated runtime, the journal, the effect executor) runs on it
// unchanged. Time only moves when an event runs: nothing sleeps. Sleep
// panics, since it would block the node's only goroutine.
//
// Not safe for concurrent use: only the goroutine running the node may
// call it (the journal's writer goroutine only reads Now, for records
// without a time, which the simulation never appends).
type Clock struct {
	now  time.Time
	q    eventQueue
	seq  uint64
	rand *rand.Rand
}

// newClock returns a clock at start whose same-instant order comes from r.
func newClock(start time.Time, r *rand.Rand) *Clock {
	return &Clock{now: start, rand: r}
}

// event is one scheduled thing.
type event struct {
	at        time.Time
	tie, seq  uint64
	fn        func()
	cancelled bool
	index     int
}

// schedule runs fn at at (not before now).
func (c *Clock) schedule(at time.Time, fn func()) *event {
	if at.Before(c.now) {
		at = c.now
	}
	c.seq++
	e := &event{at: at, tie: c.rand.Uint64(), seq: c.seq, fn: fn}
	heap.Push(&c.q, e)
	return e
}

// cancel removes e from the queue if it has not run.
func (c *Clock) cancel(e *event) bool {
	if e == nil || e.cancelled || e.index < 0 {
		return false
	}
	e.cancelled = true
	heap.Remove(&c.q, e.index)
	return true
}

// next pops the next event and moves the time to it; nil if none is left.
func (c *Clock) next() *event {
	if c.q.Len() == 0 {
		return nil
	}
	e := heap.Pop(&c.q).(*event)
	c.now = e.at
	return e
}

// peek returns the time of the next event.
func (c *Clock) peek() (time.Time, bool) {
	if c.q.Len() == 0 {
		return time.Time{}, false
	}
	return c.q[0].at, true
}

// Pending is the number of events in the queue.
func (c *Clock) Pending() int { return c.q.Len() }

// Now implements clock.PassiveClock.
func (c *Clock) Now() time.Time { return c.now }

// Since implements clock.PassiveClock.
func (c *Clock) Since(t time.Time) time.Duration { return c.now.Sub(t) }

// After implements clock.Clock.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// NewTimer implements clock.Clock: its channel gets the time when an event
// runs at now+d.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Sleep implements clock.Clock by panicking: in the simulation nothing may
// block.
func (c *Clock) Sleep(d time.Duration) {
	panic("sim: Clock.Sleep would block the simulation's only goroutine")
}

// Tick implements clock.Clock.
func (c *Clock) Tick(d time.Duration) <-chan time.Time { return c.NewTicker(d).C() }

// NewTicker implements clock.WithTicker.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	t := &ticker{c: c, d: d, ch: make(chan time.Time, 1)}
	t.arm()
	return t
}

// AfterFunc implements clock.WithDelayedExecution: f runs as an event at
// now+d, in the node's goroutine.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &timer{c: c, f: f}
	t.Reset(d)
	return t
}

type timer struct {
	c  *Clock
	ch chan time.Time
	f  func()
	ev *event
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	ok := t.c.cancel(t.ev)
	t.ev = nil
	return ok
}

func (t *timer) Reset(d time.Duration) bool {
	active := t.Stop()
	t.ev = t.c.schedule(t.c.now.Add(d), func() {
		t.ev = nil
		if t.f != nil {
			t.f()
			return
		}
		select {
		case t.ch <- t.c.now:
		default:
		}
	})
	return active
}

type ticker struct {
	c  *Clock
	d  time.Duration
	ch chan time.Time
	ev *event
}

func (t *ticker) arm() {
	t.ev = t.c.schedule(t.c.now.Add(t.d), func() {
		select {
		case t.ch <- t.c.now:
		default:
		}
		t.arm()
	})
}

func (t *ticker) C() <-chan time.Time { return t.ch }
func (t *ticker) Stop()               { t.c.cancel(t.ev) }

// eventQueue is a min-heap by (at, tie, seq).
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}
func (q eventQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *eventQueue) Push(x any) {
	e := x.(*event)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*q = old[:len(old)-1]
	return e
}
