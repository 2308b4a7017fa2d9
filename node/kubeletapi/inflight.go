package kubeletapi

import "sync"

// inflight counts running handlers. Unlike a sync.WaitGroup it may be
// entered while someone waits: after stopAndWait begins, enter refuses.
type inflight struct {
	mu       sync.Mutex
	n        int
	stopping bool
	idle     chan struct{} // closed when stopping and n is 0
}

func newInflight() *inflight { return &inflight{idle: make(chan struct{})} }

// enter counts a handler in; false once stopping.
func (f *inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping {
		return false
	}
	f.n++
	return true
}

func (f *inflight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.stopping && f.n == 0 {
		close(f.idle)
	}
}

// stopAndWait refuses new handlers and returns when the running ones have
// ended. Called once.
func (f *inflight) stopAndWait() {
	f.mu.Lock()
	f.stopping = true
	if f.n == 0 {
		close(f.idle)
	}
	f.mu.Unlock()
	<-f.idle
}
