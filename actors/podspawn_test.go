package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

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

// The Supervisor finds a PodActor's pod from its name, whatever the UID
// holds (spawn names it uid + NextId, whose only "$" is its first).
func TestPodOfReadsTheSpawnedName(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	self := system.NewLocalPID("supervisor")
	for _, uid := range []string{"00000000-0000-4000-8000-000000000001", "a$b/c", ""} {
		name := uid + system.ProcessRegistry.NextId()
		got, ok := podOf(self, system.NewLocalPID(self.Id+"/"+name))
		if !ok || got != uid {
			t.Errorf("podOf(%q) = %q, %v; want %q", name, got, ok, uid)
		}
	}
	if _, ok := podOf(self, system.NewLocalPID("other/x$1")); ok {
		t.Error("podOf took another actor's child for a pod")
	}
}
