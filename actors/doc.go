// Package actors runs pods as actors on protoactor-go.
//
//	Supervisor ──spawns──► PodActor (one per pod UID) ──► ContainerActor (one per container, one for the sandbox) ──► CRI
//	    ▲                      │
//	    │ sources, runtime     ├──► Journal.Append: durable before anything else happens
//	    │ views (watcher)      └──► StatusSink (pod status, metrics)
//
// A PodActor is the only writer of its pod's state. For every input it calls
// the pure lifecycle core (package lifecycle), appends the decided events to
// the journal, and only once they are durable adopts the new state, publishes
// the pod's status and hands the outstanding effects to its ContainerActors.
// A failed append panics the actor; the Supervisor restarts it and it
// recovers from what is really on disk, then lists the runtime again.
//
// ContainerActors carry out one effect at a time for one container (or the
// sandbox) with the runtime's per-call timeout, idempotently (create looks for
// the attempt first, stop and remove treat NotFound as done), and report the
// outcome to their PodActor. Transient runtime errors (unavailable, timeout)
// are retried by the PodActor with back-off and never reach the core; only
// definitive outcomes do. ContainerActors hold no state of their own.
package actors
