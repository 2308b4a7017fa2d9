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
	// after are the functions to run at cancel, nil while there are none.
	after []*afterEntry
	// unhook stops the parent's AfterFunc that cancels this context.
	unhook func() bool
}

// afterEntry is one function to run at cancel, and its place in after.
type afterEntry struct {
	f func()
	i int
}

// newPodContext returns a podContext of parent and the function that
// cancels it (idempotent; it also lets go of the parent). A parent that is
// a podContext itself (the Supervisor's, for its PodActors') is joined
// through its AfterFunc, at the cost of a slot in its slice.
func newPodContext(parent context.Context) (*podContext, context.CancelFunc) {
	c := &podContext{Context: parent, done: make(chan struct{})}
	if err := parent.Err(); err != nil {
		c.cancel(err)
		return c, func() {}
	}
	end := func() { c.cancel(parent.Err()) }
	var unhook func() bool
	if p, ok := parent.(*podContext); ok {
		unhook = p.AfterFunc(end)
	} else {
		unhook = context.AfterFunc(parent, end)
	}
	c.mu.Lock()
	if c.err == nil {
		c.unhook = unhook
	}
	c.mu.Unlock()
	return c, func() { c.cancel(context.Canceled) }
}

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
	e := &afterEntry{f: f, i: len(c.after)}
	c.after = append(c.after, e)
	c.mu.Unlock()
	return func() bool {
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
}

func (c *podContext) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	after, unhook := c.after, c.unhook
	c.after, c.unhook = nil, nil
	for _, e := range after {
		e.i = -1 // its stop now reports false
	}
	close(c.done)
	c.mu.Unlock()
	if unhook != nil {
		unhook()
	}
	for _, e := range after {
		e.f()
	}
}
