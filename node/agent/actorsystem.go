package agent

import (
	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// registryBuckets is how many concurrent maps a node's actor system keeps
// its actors' PIDs in: a node runs a few actors per pod (at most a few
// thousand), and a PID caches its process once resolved, so 16 maps of
// 32 locked shards each hold them without contention.
const registryBuckets = 16

// newActorSystem is protoactor's actor system with a process registry
// sized for one node. protoactor's own registry is 1,024 concurrent maps of
// 32 shards each, about 2.7 MB of heap per system before its first actor:
// sized for a process of one system and millions of actors, it was three
// quarters of a fleet's heap (a heap profile of 200 nodes without pods: 554
// MB of 752 MB in concurrent-map.New). The registry is swapped for a
// smaller one before any actor of the node is spawned, with the system's
// own processes (dead letters, event stream) moved over; nothing else uses
// the system yet.
func newActorSystem(opts ...actor.ConfigOption) *actor.ActorSystem {
	sys := actor.NewActorSystem(opts...)
	small := &actor.SliceMap{LocalPIDs: make([]cmap.ConcurrentMap, registryBuckets)}
	for i := range small.LocalPIDs {
		small.LocalPIDs[i] = cmap.New()
	}
	for _, bucket := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		// Count locks each shard in turn; IterBuffered starts a goroutine
		// per shard, 32,768 of them per node if asked of every map.
		if bucket.Count() == 0 {
			continue
		}
		for item := range bucket.IterBuffered() {
			small.GetBucket(item.Key).Set(item.Key, item.Val)
		}
	}
	sys.ProcessRegistry.LocalPIDs = small
	return sys
}
