package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// shell plays the PodActor's part for one pod, deterministically, around
// the same executor: the core's Driver (lifecycle.Driver) decides each
// input, says what to journal before anything else, and hands out the
// effects ready to run (at most one per key in flight, nothing before a
// first runtime view, back-off of failed effects, transient failures only
// retried, an effect that changed nothing not repeated before the next
// view, fresh creations without a lookup), the timer, the listings, the
// snapshots and the pod's end; the shell carries them out with the
// ContainerActor's code (actors.RunEffect) on the virtual clock.
//
// A removed pod's clean-up (lifecycle.CleanUpPod) is an effect like the
// others, carried out by the same code: the simulation has no volumes, so
// it removes the pod's log directory if the node's options name one, and
// otherwise just succeeds; the shell finishes only once its outcome,
// PodCleanedUp, is journaled, so a crash between the two is exercised.
//
// What it leaves out of the PodActor's shell: probes, hooks, volumes,
// status publishing and API events, admission, and the append-failure wait.
type shell struct {
	uid     string
	drv     *lifecycle.Driver
	timer   *event
	stopped bool
}

// state is the pod's durable state (its Driver's).
func (p *shell) state() *lifecycle.State { return p.drv.State() }

func (n *Node) newShell(uid string, st *lifecycle.State) *shell {
	return &shell{uid: uid, drv: lifecycle.NewDriver(n.deps.Lifecycle,
		lifecycle.Retry{Min: n.deps.RetryMin, Max: n.deps.RetryMax, Snapshot: snapshotEvery}, st)}
}

// live reports whether p is still the node's current shell of its pod.
func (n *Node) live(p *shell) bool { return !p.stopped && !n.down && n.pods[p.uid] == p }

// handle runs one input through the core: decide, append, adopt, act.
func (n *Node) handle(p *shell, in lifecycle.Input) {
	if !n.live(p) {
		return
	}
	n.carryOut(p, in, p.drv.Step(in, n.clock.Now()))
}

// carryOut makes the decision rd durable, adopts it and carries out the
// work it makes ready.
func (n *Node) carryOut(p *shell, in lifecycle.Input, rd lifecycle.Ready) {
	if rd.State() == nil {
		return
	}
	if n.s.trace != nil {
		n.s.trace(n, p.uid, fmt.Sprintf("input %T -> %d events %v", in, len(rd.Events), rd.Events))
	}
	if len(rd.Events) > 0 {
		if err := n.append(p.uid, rd.Events); err != nil {
			n.fail(p.uid, err.Error())
			return
		}
	}
	prev := p.state()
	w := p.drv.Advance(rd, nil)
	if w.Appended {
		n.check.appended(p, prev, rd.Events)
	}
	if w.Finish {
		n.finish(p)
		return
	}
	if w.Snapshot {
		n.snapshot(p)
	}
	if w.Appended && n.crashDue() {
		// A kill -9 right after a journal write, before its effects.
		n.crash("after an append")
		return
	}
	if !w.TimerAt.IsZero() {
		n.arm(p, w.TimerAt)
	}
	for _, d := range w.Run {
		if !n.live(p) {
			return
		}
		n.run(p, d.Effect, d.Fresh)
		if n.s.bugDoubleStart {
			if _, start := d.Effect.(lifecycle.StartContainer); start {
				// The injected bug (tests only): the start is carried
				// out a second time.
				n.run(p, d.Effect, d.Fresh)
			}
		}
	}
	if w.List && n.live(p) {
		n.list(p)
	}
}

// run carries out effect e with the ContainerActor's code, now; its
// outcome reaches the shell after the virtual time its calls took.
func (n *Node) run(p *shell, e lifecycle.Effect, fresh bool) {
	n.delay = 0
	podIP := ""
	if sb := p.state().P.Sandbox; sb != nil {
		podIP = sb.Ip
	}
	n.check.current = p.uid
	res, err := actors.RunEffect(context.Background(), n.deps, p.uid, e, p.state().Pod, podIP, fresh)
	n.check.current = ""
	n.after(n.delay, func() {
		if n.live(p) {
			n.effectDone(p, e, res, err)
		}
	})
}

// effectDone takes an effect's outcome, as podActor.effectDone does.
func (n *Node) effectDone(p *shell, e lifecycle.Effect, res *pb.EffectResult, err error) {
	rd, retryAfter := p.drv.Done(e, res, err, err != nil && cri.Retryable(err), n.clock.Now())
	if err != nil {
		n.after(retryAfter, func() { n.handle(p, &pb.Tick{}) })
	} else {
		n.check.effectSucceeded(e)
	}
	n.carryOut(p, res, rd)
}

// requestList lists the pod in the runtime for its shell, unless a
// listing is on its way.
func (n *Node) requestList(p *shell) {
	if p.drv.RequestList() {
		n.list(p)
	}
}

// list lists the pod for a listing its Driver asked for.
func (n *Node) list(p *shell) {
	n.delay = 0
	epoch := n.epochs.Next()
	v, err := n.client.ListPod(context.Background(), p.uid)
	if err == nil {
		v.Epoch, v.Returned = epoch, n.epochs.Now()
	}
	n.after(n.delay, func() {
		if !n.live(p) {
			return
		}
		if after := p.drv.Listed(err == nil); err != nil {
			n.after(after, func() { n.requestList(p) })
			return
		}
		n.lastView[p.uid] = v
		n.observe(p, v)
	})
}

// observe gives the shell a runtime view.
func (n *Node) observe(p *shell, v *cri.PodView) {
	n.handle(p, actors.Observed(p.uid, v))
}

// arm sets the pod's one timer to a Tick at at.
func (n *Node) arm(p *shell, at time.Time) {
	n.clock.cancel(p.timer)
	p.timer = n.after(at.Sub(n.clock.Now()), func() {
		p.timer = nil
		p.drv.TimerFired()
		n.handle(p, &pb.Tick{})
	})
}

// finish ends the shell once its pod is done (removed and cleaned up): the
// final state is compacted into a snapshot, then the node forgets it.
func (n *Node) finish(p *shell) {
	if n.s.trace != nil {
		n.s.trace(n, p.uid, "finish")
	}
	p.stopped = true
	n.clock.cancel(p.timer)
	if p.drv.SinceSnapshot() > 0 {
		n.snapshot(p)
	}
	delete(n.pods, p.uid)
}

func (n *Node) snapshot(p *shell) {
	err := n.j.SaveSnapshot(context.Background(), &pb.Snapshot{
		Seq: p.state().P.Seq, TimeUnixNano: n.clock.Now().UnixNano(), PodUid: p.uid, State: p.state().P,
	})
	if err != nil {
		n.fail(p.uid, "snapshot: "+err.Error())
		return
	}
	p.drv.Snapshotted()
}

// phase is the pod's phase as its shell's state says.
func (n *Node) phase(p *shell) corev1.PodPhase { return lifecycle.Phase(p.state(), n.clock.Now()) }
