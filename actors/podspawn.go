package actors

import (
	"sync"

	"github.com/actorlet/actorlet/actors/lifecycle"
)

// podSpawn is what a PodActor's incarnation starts with: its pod, and for a
// first incarnation the state recovery found (nil: load it) and what the
// Supervisor sends it (spawnMode).
type podSpawn struct {
	uid     string
	initial *lifecycle.State
	mode    spawnMode
}

// podSpawns hands each PodActor incarnation its podSpawn, by the actor's
// PID.Id: the Supervisor puts it before it spawns the actor, an
// incarnation puts its successor's at Restarting (mode restarted: it
// reloads from disk), and the incarnation takes it at Started. So one Props,
// made by the Supervisor per incarnation of its own, serves all its
// PodActors: protoactor keeps an actor's Props (about 240 bytes) and its
// producer with the closure's captures for as long as the actor runs, which
// a Props per pod made per-pod memory. Safe for concurrent use (PodActors
// restart in their own goroutines).
type podSpawns struct {
	mu sync.Mutex
	m  map[string]podSpawn
}

// put sets the podSpawn of the actor with PID.Id id.
func (h *podSpawns) put(id string, s podSpawn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]podSpawn{}
	}
	h.m[id] = s
}

// take returns and forgets the podSpawn of the actor with PID.Id id.
func (h *podSpawns) take(id string) (podSpawn, bool) {
	if h == nil {
		return podSpawn{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.m[id]
	if ok {
		delete(h.m, id)
		if len(h.m) == 0 {
			h.m = nil // a Go map keeps its storage once emptied
		}
	}
	return s, ok
}
