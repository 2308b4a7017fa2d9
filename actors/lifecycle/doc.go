// Package lifecycle is the pure core of actorlet's pod lifecycle.
//
// It decides, for one pod, what happened and what to do next, and it does no
// I/O: it imports neither protoactor, the CRI client nor bbolt, reads no clock
// (time comes in as an argument) and keeps no hidden state. Three functions
// make it up:
//
//	Apply(state, envelope)            // fold one journaled event into the state
//	Decide(state, input, now) Decision // events to journal, effects to carry out
//	Status(state, env) corev1.PodStatus
//
// Apply is used both live and on replay, so replaying a pod's journal rebuilds
// exactly the state the live run had. Decide works on a copy: its Decision
// holds the journal envelopes to append, the state after them, and the effects
// still outstanding in that state. The caller (a PodActor) appends the events,
// and only once they are durable adopts the new state and carries out the
// effects.
//
// Effects are derived from the state, not from the last event
// (level-triggered): after a replay, Decide with a Tick yields exactly the
// effects that were still outstanding. Every effect is idempotent, keyed by
// Effect.Key, and the caller runs at most one effect per key at a time.
//
// # Write-ahead intents
//
// Before a sandbox or a container is created, Decide records the intent
// (SandboxRequested{attempt}, ContainerRequested{name, attempt}); the effect
// carries the attempt, which the runtime object gets in its metadata. A
// runtime view (RuntimeObserved) showing an object with that attempt adopts it;
// an object that no record explains is stray and is stopped and removed. So
// a crash between intent and result never creates a second sandbox or starts a
// container twice.
//
// # One pod's timeline
//
//	PodAccepted ─► SandboxRequested(n) ─► SandboxCreated(n)
//	   ─► [ImagePulled] ─► ContainerRequested(c,k) ─► ContainerCreated ─► ContainerStarted
//	   ─► ContainerExited ─► BackOffStarted ─► ContainerRequested(c,k+1) ...
//	PodTerminating ─► (StopContainer…) ContainerExited ─► SandboxStopped ─► SandboxRemoved
//	   ─► PodTerminated ─► PodRemoved ─► (CleanUpPod) PodCleanedUp
//
// A removed pod is done (Driver: Finish) only once its clean-up, the
// CleanUpPod effect (its volumes, pod cgroup and log directory), has
// journaled its outcome, PodCleanedUp: a crash before that hands the
// clean-up out again, which is harmless (it is idempotent); after it,
// never.
//
// A pod with spec.activeDeadlineSeconds arms a timer at that long after its
// acceptance; reached before the pod finished, it journals
// ActiveDeadlineExceeded: the pod is Failed (DeadlineExceeded), its
// containers are stopped with its grace period and its sandbox stopped;
// nothing restarts and the pod stays until its source removes it.
//
// # Lifecycle hooks
//
// With Config.HookStages set, the node's lifecycle hooks (user code) are
// asked at those stages of the pod's life (see Stage): Decide journals the
// intent HookRequested{stage, container, attempt, try} and hands out
// RunHook; the verdict comes back as an EffectResult and is journaled as
// HookDecided before the step goes on, waits (Delay) or is refused (Veto).
// A try is handed out only by the process that journaled it (State keeps,
// unjournaled, which tries it asked for): after a replay, an undecided try
// is decided Interrupted and the step asked again as the next try, so a
// crash never runs a try twice. This is the one place where the effects
// after a replay differ from the live run's: the RunHook then outstanding
// is not handed out again.
package lifecycle
