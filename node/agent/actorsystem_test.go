package agent

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// A node's actor system keeps its PIDs in registryBuckets maps, still
// knows the processes protoactor registered at its start (dead letters,
// the event stream), and spawns, reaches and forgets actors as before.
func TestActorSystemRegistryIsSmall(t *testing.T) {
	sys := newActorSystem()
	defer sys.Shutdown()
	if n := len(sys.ProcessRegistry.LocalPIDs.LocalPIDs); n != registryBuckets {
		t.Fatalf("the registry has %d buckets, want %d", n, registryBuckets)
	}
	for _, id := range []string{"deadletter", "eventstream"} {
		if _, ok := sys.ProcessRegistry.GetLocal(id); !ok {
			t.Errorf("%s is not in the registry after the swap", id)
		}
	}
	count := func() int {
		n := 0
		for _, b := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
			n += b.Count()
		}
		return n
	}
	before := count()
	const actors = 100
	pids := make([]*actor.PID, actors)
	for i := range pids {
		pids[i] = sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if s, ok := c.Message().(string); ok {
				c.Respond(s + "!")
			}
		}))
	}
	if got := count(); got != before+actors {
		t.Fatalf("%d processes registered after spawning %d, want %d", got, actors, before+actors)
	}
	for i, pid := range pids {
		r, err := sys.Root.RequestFuture(pid, "hi", 10*time.Second).Result()
		if err != nil || r != "hi!" {
			t.Fatalf("actor %d answered %v, %v", i, r, err)
		}
	}
	for _, pid := range pids {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if got := count(); got != before {
		t.Errorf("%d processes registered after stopping them all, want %d", got, before)
	}
	// The event stream still reaches its subscribers through the registry.
	got := make(chan any, 1)
	sub := sys.EventStream.Subscribe(func(evt any) {
		if s, ok := evt.(string); ok {
			got <- s
		}
	})
	defer sys.EventStream.Unsubscribe(sub)
	sys.Root.Send(sys.NewLocalPID("eventstream"), "published")
	select {
	case e := <-got:
		if e != "published" {
			t.Errorf("event stream delivered %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Error("the event stream process did not deliver a message sent to its PID")
	}
}
