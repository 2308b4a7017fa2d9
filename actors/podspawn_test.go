package actors

import "testing"

// A podSpawn is taken once, by the actor it was put for, and the handoff
// keeps no storage once every spawn was taken: the Supervisor's PodActors
// share one Props and find their pods here.
func TestPodSpawnsHandOffOnce(t *testing.T) {
	var h podSpawns
	h.put("supervisor/a$1", podSpawn{uid: "a", mode: withView})
	h.put("supervisor/b$2", podSpawn{uid: "b", mode: restarted})
	if s, ok := h.take("supervisor/a$1"); !ok || s.uid != "a" || s.mode != withView {
		t.Fatalf("take a = %+v, %v", s, ok)
	}
	if _, ok := h.take("supervisor/a$1"); ok {
		t.Fatal("a spawn was taken twice")
	}
	if s, ok := h.take("supervisor/b$2"); !ok || s.uid != "b" || s.mode != restarted {
		t.Fatalf("take b = %+v, %v", s, ok)
	}
	if h.m != nil {
		t.Fatalf("the handoff keeps a map of %d entries once all were taken", len(h.m))
	}
	var none *podSpawns // an actor spawned without a Supervisor
	if _, ok := none.take("x"); ok {
		t.Fatal("a nil handoff handed something off")
	}
}
