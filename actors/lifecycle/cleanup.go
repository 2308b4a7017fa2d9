package lifecycle

import (
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// CleanUpPod removes what a removed pod had on the node besides its runtime
// objects: it tears down the pod's volumes, removes its pod cgroup and its
// pod log directory. It is outstanding from PodRemoved (the pod is gone
// from its source and the runtime holds nothing of it) until its success is
// journaled as PodCleanedUp; only then is the pod Done.
//
// Guarantees, for whoever carries it out:
//   - it is handed out only once the runtime holds nothing of the pod (no
//     stray object in the last view), and never while a new life of the
//     same UID could be setting up (a PodDesired waits for PodCleanedUp);
//   - it may be carried out more than once: a failure is retried with the
//     Driver's back-off, and a crash before PodCleanedUp is durable hands it
//     out again; so each step must be idempotent and take "already gone" as
//     done;
//   - once PodCleanedUp is journaled it is never handed out again for that
//     life of the pod.
//
// The pod's spec, which names its cgroup and log directory, comes with the
// effect from the state (State.Pod); a pod without one (an orphan stream)
// has only its volumes, found by UID.
type CleanUpPod struct{}

func (CleanUpPod) Key() string    { return "cleanup" }
func (CleanUpPod) String() string { return "CleanUpPod" }

// CleanUpPending reports whether the pod is removed but its clean-up
// (CleanUpPod) is not journaled yet. A pod rejected before it ever had a
// sandbox has nothing on the node to clean up.
func (s *State) CleanUpPending() bool {
	return s.P.Removed && !s.P.CleanedUp && !s.neverRan()
}

// neverRan: the pod was rejected before any sandbox was asked for.
func (s *State) neverRan() bool { return s.P.Rejected && s.P.SandboxAttempt == 0 }

// cleanUp adds CleanUpPod to a removed pod's effects while its clean-up is
// pending and the runtime, as last seen, holds nothing of the pod.
func (d *decider) cleanUp(fx *effects) {
	if d.s.CleanUpPending() && d.strayCount == 0 {
		fx.add(CleanUpPod{})
	}
}

// cleanedUp takes CleanUpPod's outcome: a success is journaled
// (PodCleanedUp) once; a failure decides nothing (the Driver retries it).
func (d *decider) cleanedUp(res *pb.EffectResult) {
	if res.Failed || !d.s.CleanUpPending() {
		return
	}
	d.emit(&pb.Event{Kind: &pb.Event_PodCleanedUp{PodCleanedUp: &pb.PodCleanedUp{}}})
}
