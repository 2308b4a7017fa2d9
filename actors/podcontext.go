package actors

import (
	"context"
	"sync"
)

// podContext is a PodActor's context: done when its parent is or when it is
// canceled, as a context.WithCancel child is, with the context package's
// Canceled or the parent's error. What differs is what it keeps of the
// contexts derived from it (every CRI call's timeout, volume and probe
// work): they join it through AfterFunc (the context package's
// afterFuncer), and it keeps them in a slice it lets go once they are all
// gone, where a context.WithCancel keeps the map its children went into
// for as long as it lives (about 256 bytes for every running pod).
type podContext struct {
	context.Context // the parent: Deadline and Value

	mu   sync.Mutex
	done chan struct{}
	err  error
	// after are the functions to run at cancel, and the podContexts
	// derived from this one, nil while there are none.
	after []*afterEntry
	// joined is this context's entry in its parent's after when the
	// parent is a podContext; for a parent of another kind (the
	// Supervisor's, once per node) an entry of its own whose f stops the
	// context.AfterFunc that cancels this one. Nil once given back. (One
	// field for both: 80 bytes is a podContext's size class.)
	joined *afterEntry
}

// afterEntry is one function to run at cancel, or a podContext to cancel
// (kid: a PodActor's, joining the Supervisor's without the two closures an
// AfterFunc would cost), and its place in after (-1: in none).
type afterEntry struct {
	f   func()
	kid *podContext
	i   int
}

// newPodContext returns a podContext of parent; Cancel cancels it. A
// parent that is a podContext itself (the Supervisor's, for its
// PodActors') is joined by a slot in its slice, which Cancel gives back.
func newPodContext(parent context.Context) *podContext {
	c := &podContext{Context: parent, done: make(chan struct{})}
	if err := parent.Err(); err != nil {
		c.cancel(err)
		return c
	}
	if p, ok := parent.(*podContext); ok {
		p.mu.Lock()
		if p.err == nil {
			c.joined = p.addLocked(&afterEntry{kid: c})
		}
		err := p.err
		p.mu.Unlock()
		if err != nil {
			c.cancel(err)
		}
		return c
	}
	unhook := context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
	c.mu.Lock()
	if c.err == nil {
		c.joined = &afterEntry{f: func() { unhook() }, i: -1}
	}
	c.mu.Unlock()
	return c
}

// Cancel cancels c, with context.Canceled, and what derives from it; it
// lets go of its parent. Idempotent.
func (c *podContext) Cancel() { c.cancel(context.Canceled) }

// Done implements context.Context.
func (c *podContext) Done() <-chan struct{} { return c.done }

// Err implements context.Context.
func (c *podContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value implements context.Context: the parent's values, but for the key
// under which a context.WithCancel context answers itself (found with
// cancelProbe), which context.Cause and the joining of derived contexts look
// up: they get nothing, and so use Err and AfterFunc, which are this
// context's, instead of its parent's.
func (c *podContext) Value(key any) any {
	if cancelProbe.Value(key) == cancelProbe {
		return nil
	}
	return c.Context.Value(key)
}

// cancelProbe answers itself for the context package's own key only.
var cancelProbe = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// AfterFunc arranges for f to run once c is done, and returns stop, which
// keeps f from running and reports whether it did. The context package
// calls it to join the contexts derived from c (context.WithCancel and the
// others, context.AfterFunc), always with a function that cancels one of
// them: f runs in the goroutine that cancels c, as a context.WithCancel
// cancels its children, or, if c is done already, in a goroutine of its
// own (the caller may hold the derived context's lock).
func (c *podContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	e := c.addLocked(&afterEntry{f: f})
	c.mu.Unlock()
	return func() bool { return c.remove(e) }
}

// addLocked puts e in after; c.mu is held.
func (c *podContext) addLocked(e *afterEntry) *afterEntry {
	e.i = len(c.after)
	c.after = append(c.after, e)
	return e
}

// remove takes e out of after and reports whether it was there (not run,
// not removed before).
func (c *podContext) remove(e *afterEntry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.i < 0 {
		return false // ran, or stopped before
	}
	last := len(c.after) - 1
	moved := c.after[last]
	c.after[e.i], moved.i = moved, e.i
	c.after[last] = nil
	c.after = c.after[:last]
	if len(c.after) == 0 {
		c.after = nil // let the slice go, unlike a map
	}
	e.i = -1
	return true
}

func (c *podContext) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	after, joined := c.after, c.joined
	c.after, c.joined = nil, nil
	for _, e := range after {
		e.i = -1 // its stop now reports false
	}
	close(c.done)
	c.mu.Unlock()
	if joined != nil {
		if p, ok := c.Context.(*podContext); ok {
			p.remove(joined)
		} else {
			joined.f() // stop the parent's AfterFunc
		}
	}
	for _, e := range after {
		if e.kid != nil {
			e.kid.cancel(err)
		} else {
			e.f()
		}
	}
}
