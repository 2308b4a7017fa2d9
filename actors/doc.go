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
// A failed append (disk full, EIO, a read-only file system) drops the
// decision: the state stays the durable one and none of its effects run.
// The pod waits and retries with back-off (RetryMin doubling to RetryMax):
// its commands (PodDesired, PodUndesired, PodEvict) are decided again in
// order, and the runtime is listed afresh, which brings back the outcome of
// any effect; runtime views, effect results, ticks and probe results are
// never replayed stale. Deps.AppendHealth hears when a pod's appends start
// failing and when they succeed again (/healthz). Only a journal that is
// gone (Deps.Fatal) stops the actor and the node.
//
// A pod whose history is lost (its stream failed its check, or the journal
// was quarantined, empty or missing while the runtime holds the pod's
// objects) is rebuilt from the runtime: the Supervisor marks its first
// runtime view Rebuild, and the core adopts the runtime's sandbox and
// containers into the state (see lifecycle's adopt), restarting nothing.
// The rebuilt state is journaled like any other; the actor logs the rebuild
// at error level and tells Deps.Rebuilt (metric, API event).
//
// ContainerActors carry out one effect at a time for one container (or the
// sandbox) with the runtime's per-call timeout, idempotently (create looks for
// the attempt first, stop and remove treat NotFound as done), and report the
// outcome to their PodActor. Transient runtime errors (unavailable, timeout)
// are retried by the PodActor with back-off and never reach the core; only
// definitive outcomes do. ContainerActors hold no state of their own.
//
// Contexts: the Supervisor runs on the context it was made with (the node's
// lifetime); each PodActor on one derived from it, cancelled when the actor
// stops or restarts; its ContainerActors' CRI calls, volume set-ups, probes
// and journal calls on the PodActor's. So a stopping node or pod actor
// cancels the calls in flight instead of waiting out the runtime's timeout.
// An effect cut short so has no outcome: it is not journaled, retried nor
// backed off, and stays outstanding behind its journaled intent for the
// next start. StartContainer alone is not cancelled (see
// containerActor.run): cut inside containerd it strands the container.
package actors
