package sim

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns a random 64-hex-digit identifier, the shape containerd uses
// for sandbox and container IDs.
func newID() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}

// newID returns the ID of a new sandbox or container: Options.NewID's, or
// a random one. r.mu must be held.
func (r *Runtime) newID() string {
	if r.opts.NewID != nil {
		return r.opts.NewID()
	}
	return newID()
}
