package lifecycle

import (
	"time"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// The reason and message of a pod that outlived its activeDeadlineSeconds,
// as the kubelet's activeDeadlineHandler words them.
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// activeDeadline returns when the pod's spec.activeDeadlineSeconds runs out:
// that long after the pod was accepted, which is its status.startTime, the
// time the kubelet measures from. ok is false for a pod without one.
func activeDeadline(s *State) (at time.Time, ok bool) {
	if s.Pod == nil || s.Pod.Spec.ActiveDeadlineSeconds == nil || s.P.AcceptedAtUnixNano == 0 {
		return time.Time{}, false
	}
	secs := *s.Pod.Spec.ActiveDeadlineSeconds
	return time.Unix(0, s.P.AcceptedAtUnixNano).Add(time.Duration(secs) * time.Second), true
}

// checkActiveDeadline journals ActiveDeadlineExceeded once a pod that has
// not finished reaches its active deadline (at the deadline exactly, as the
// kubelet's duration >= allowed), or else asks for a Tick at the deadline.
// Only now decides: a replay at the same now gives the same answer, and a
// deadline that passed while actorlet was down fires at the first Decide.
func (d *decider) checkActiveDeadline(fx *effects) {
	p := d.s.P
	if p.DeadlineExceeded || p.Terminating || p.Terminated {
		return
	}
	at, ok := activeDeadline(d.s)
	if !ok {
		return
	}
	if finished(d.s, d.now) {
		return // finished before its deadline: it stays as it ended
	}
	if d.now.Before(at) {
		fx.wakeAt(at)
		return
	}
	grace := d.graceOf(d.s.Pod)
	d.emit(&pb.Event{Kind: &pb.Event_ActiveDeadlineExceeded{ActiveDeadlineExceeded: &pb.ActiveDeadlineExceeded{
		GracePeriodNanos: int64(grace), DeadlineUnixNano: d.now.Add(grace).UnixNano(),
		Reason: ReasonDeadlineExceeded, Message: MessageDeadlineExceeded}}})
}

// planDeadlineKill stops a pod past its active deadline the way the kubelet
// kills a pod it failed: its containers with the pod's grace period (what
// is left of it), a create in flight finished first and then stopped, then
// its sandbox. Nothing is restarted (restartWanted is false) and the pod is
// not removed: like a finished pod it stays, Failed, with its stopped
// sandbox, until its source lets it go.
func (d *decider) planDeadlineKill(fx *effects) {
	p := d.s.P
	d.retireOldSandboxes(fx)
	cur := p.Sandbox
	if cur == nil {
		return
	}
	switch cur.Phase {
	case pb.SandboxPhase_SANDBOX_REQUESTED:
		// The create may be in flight or done: finish it, then stop it.
		fx.add(RunSandbox{Attempt: cur.Attempt})
	case pb.SandboxPhase_SANDBOX_READY, pb.SandboxPhase_SANDBOX_FAILED:
		grace := max(time.Duration(p.KillDeadlineUnixNano-d.now.UnixNano()), 0)
		live := d.stopLive(fx, grace)
		if d.finishCreates(fx) || live {
			return
		}
		if cur.Id != "" {
			fx.add(StopSandbox{ID: cur.Id})
		}
	}
}

// evict journals PodEvicted for a pod that runs (accepted, not finished,
// not already failed or going): it is then stopped as planDeadlineKill
// stops a pod past its deadline, and stays Failed with the eviction's
// reason and message. The grace period is the eviction's, at most what the
// pod's own allows.
func (d *decider) evict(in *pb.PodEvict) {
	p := d.s.P
	if !d.s.Accepted() || p.DeadlineExceeded || p.Terminating || p.Terminated || p.Removed {
		return
	}
	if finished(d.s, d.now) {
		return
	}
	grace := max(min(time.Duration(in.GetGracePeriodNanos()), d.graceOf(d.s.Pod)), 0)
	d.emit(&pb.Event{Kind: &pb.Event_PodEvicted{PodEvicted: &pb.PodEvicted{
		GracePeriodNanos: int64(grace), DeadlineUnixNano: d.now.Add(grace).UnixNano(),
		Reason: in.GetReason(), Message: in.GetMessage()}}})
}
