package cri

import "sync/atomic"

// Epochs number the node's runtime listings, so that the core can tell
// whether a listing began after an object's creation was known (then it
// must show the object) without comparing wall-clock times, which a clock
// step would fool. An epoch is the journal's incarnation (its count of
// writable opens, which only grows) in the high 32 bits and a counter of
// this process's listings below: every epoch of a process is above every
// epoch a process before it recorded.
//
// A listing takes Next before its first call; an effect's outcome is
// stamped with Now when its call returned. An object whose creation was
// stamped e is then certain to be in a listing of epoch l > e. Safe for
// concurrent use.
type Epochs struct {
	base uint64
	n    atomic.Uint64
}

// NewEpochs returns the epochs of a process whose journal is in its
// incarnation-th writable open.
func NewEpochs(incarnation uint64) *Epochs { return &Epochs{base: incarnation << 32} }

// Next starts a listing and returns its epoch.
func (e *Epochs) Next() uint64 {
	if e == nil {
		return 0
	}
	return e.base | e.n.Add(1)
}

// Now is the epoch of the last listing started (what an outcome known now
// is stamped with).
func (e *Epochs) Now() uint64 {
	if e == nil {
		return 0
	}
	return e.base | e.n.Load()
}
