// Package sim is a deterministic simulation of many actorlet nodes in one
// process, on a virtual clock, with seeded faults and an invariant checker:
// a seed reproduces a run exactly, so a failure found by a seed can be
// replayed step by step (as FoundationDB's simulator and TigerBeetle's VOPR
// work). `actorlet simulate` is its command; a harness can embed it:
//
//	s, _ := sim.New(sim.Options{Seed: 7, Nodes: 10, Pods: 500, Faults: plan, CrashEvery: 100})
//	defer s.Close()
//	report, _ := s.Run(ctx) // or s.Step() by step, looking at s.Nodes() between
//	fmt.Println(report.Digest, report.Violations)
//
// # What runs, and what is simulated
//
// Each node runs in one goroutine on its own virtual clock, in an order
// chosen by the seed (Clock). Nodes share nothing (each has its own
// runtime, journal, random sources, checker and share of the workload,
// planned before the run), so Run runs them side by side on
// Options.Parallel goroutines and the run is the same for any number of
// them; Step runs one event at a time, of the node due first.
// protoactor's scheduling is not deterministic, so the PodActor and its
// ContainerActors do not run here. In their place a shell per pod (shell.go)
// plays the PodActor's part around the same code:
//
//   - the pure core, actors/lifecycle (Decide, Apply, Phase), unchanged;
//   - the effect executor, the ContainerActor's own code (actors.RunEffect):
//     lookups of earlier attempts, the CRI calls, the result's fields;
//   - the real CRI client (cri.Client, with its error kinds and idempotent
//     stops), over a connection that calls the simulated runtime's service
//     methods directly (no sockets, no gRPC transport);
//   - the simulated runtime (cri/sim) of each node, with its CRI semantics
//     and misuse records, its container timers on the virtual clock;
//   - the real journal (package journal: one bbolt file per node, group
//     commit writer, checksums), with NoSync: a simulated crash is a kill -9,
//     which keeps what was committed to the page cache;
//   - recovery from the journal after a crash (actors.Restore, the
//     Supervisor's recovery order: desired state first, then the runtime
//     view) and the runtime listings (cri.Client.ListPods/ListPod).
//
// The shell drives the same executor as the PodActor, the core's Driver
// (lifecycle.Driver: one effect per key in flight, nothing before a first
// runtime view, back-off of failed effects, transient failures only
// retried, "done" effects not repeated before a new view, "fresh" creations
// without a lookup), so the simulation tests the actor's rules themselves.
// The watcher's rules (cri.Watcher: a listing per container event, a safety
// relist every 30 s, resubscription after a broken stream) are a copy kept
// by hand in watch.go: a bug only in the watcher's copy is not found here.
//
// Not in the simulation: probes, lifecycle hooks, volumes, admission, the
// status writer, API events, the node object and lease, the API server
// (the source is the workload's map of desired pods per node), journal
// write errors and full disks, machine crashes (a kill -9 only), and CRI
// latency inside the runtime (Options.Latency; the plan's latencies are
// applied, on virtual time, by the connection).
//
// # Faults
//
// Each node's runtime gets the fault plan (cri/faults) with its own seed
// (faults.SubSeed(seed, node name)), decided by the plan's pure functions:
// errors before and after a call takes effect, hangs until the CRI timeout
// (virtual), latencies, restarts of the runtime (Runtime.Restart, with a
// downtime), and dropped, duplicated, reordered events and broken streams.
// Node crashes come on top (Options.CrashEvery): a node dies right after a
// journal append, before the effects of that decision run, with replies of
// its calls in flight lost, and restarts 1-6 s later.
//
// # Invariants
//
// See checker: no second sandbox or container for one intent, no second
// READY sandbox for a pod, no container started again once its start was
// answered, no intent bound to two objects, restart counts never decrease,
// no pod lost by a crash; and at the end, after Options.Quiet of virtual
// time without faults: every pod in the phase its spec implies, statuses
// that agree with the runtime, no orphan, no pod lost.
//
// # Determinism
//
// The same Options and binary give the same run: the same steps, the same
// journaled events, the same Digest (over each node's digest, in node
// order). Everything random comes from the seed (each node's clock and
// crash points from faults.SubSeed(seed, "order/"+name) and "node/"+name);
// a violation is replayed by running its node alone (Options.OnlyNode) up
// to its step (StopAtStep);
// maps are iterated in sorted order; the runtime's IDs come from counters
// (crisim.Options.NewID) and its exits run in the clock's callbacks
// (SyncTimers). Wall-clock time enters nothing that is decided or journaled.
package sim
