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

// shell plays the PodActor's part for one pod, deterministically: it runs
// each input through the core (lifecycle Decide), journals the events
// before anything else, adopts the state, and carries out the effects
// (actors.RunEffect: the ContainerActor's code) with the PodActor's rules:
// at most one effect per key in flight, nothing before a first runtime
// view, a failed effect blocked for a back-off (RetryMin doubling to
// RetryMax) and retried, transient failures only retried, definitive ones
// told to the core, an effect that changed nothing not repeated before the
// next runtime view, and creations journaled by this incarnation tried
// without a lookup first ("fresh").
//
// It mirrors actors/podactor.go (which is bound to protoactor's mailboxes
// and goroutines); what it leaves out: probes, hooks, volumes, status
// publishing and API events, admission, and the append-failure wait.
type shell struct {
	uid       string
	st        *lifecycle.State
	inflight  map[string]bool
	done      map[string]bool
	fresh     map[string]bool
	retries   map[string]int
	blocked   map[string]time.Time
	timer     *event
	timerAt   time.Time
	listing   bool
	synced    bool
	stopped   bool
	sinceSnap int
}

func newShell(uid string, st *lifecycle.State) *shell {
	return &shell{
		uid: uid, st: st,
		inflight: map[string]bool{}, done: map[string]bool{}, fresh: map[string]bool{},
		retries: map[string]int{}, blocked: map[string]time.Time{},
	}
}

// live reports whether p is still the node's current shell of its pod.
func (n *Node) live(p *shell) bool { return !p.stopped && !n.down && n.pods[p.uid] == p }

// handle runs one input through the core: decide, append, adopt, act.
func (n *Node) handle(p *shell, in lifecycle.Input) {
	if !n.live(p) {
		return
	}
	now := n.s.clock.Now()
	dec := n.deps.Lifecycle.Decide(p.st, in, now)
	if n.s.trace != nil {
		n.s.trace(n, p.uid, fmt.Sprintf("input %T -> %d events %v", in, len(dec.Events), dec.Events))
	}
	if len(dec.Events) > 0 {
		if err := n.append(p.uid, dec.Events); err != nil {
			n.s.fail(n, p.uid, err.Error())
			return
		}
		prev := p.st
		p.st = dec.State
		p.sinceSnap += len(dec.Events)
		markFresh(p, dec.Events)
		n.s.check.appended(n, p, prev, dec.Events)
		if p.st.P.Removed || p.st.Done() {
			n.finish(p)
			return
		}
		if p.sinceSnap >= snapshotEvery {
			n.snapshot(p)
		}
		if n.crashDue() {
			// A kill -9 right after a journal write, before its effects.
			n.crash("after an append")
			return
		}
	} else {
		p.st = dec.State
		if p.st.P.Removed && len(dec.Effects) == 0 {
			n.finish(p)
			return
		}
	}
	n.dispatch(p, dec.Effects, now)
}

func markFresh(p *shell, events []*pb.Envelope) {
	for _, env := range events {
		switch ev := env.Event.Kind.(type) {
		case *pb.Event_SandboxRequested:
			p.fresh[lifecycle.RunSandbox{Attempt: ev.SandboxRequested.Attempt}.Key()] = true
		case *pb.Event_ContainerRequested:
			r := ev.ContainerRequested
			p.fresh[lifecycle.CreateContainer{Name: r.Name, Attempt: r.Attempt}.Key()] = true
		}
	}
}

func (n *Node) dispatch(p *shell, effects []lifecycle.Effect, now time.Time) {
	for _, e := range effects {
		if !n.live(p) {
			return
		}
		if t, ok := e.(lifecycle.ArmTimer); ok {
			n.arm(p, t.At)
			continue
		}
		key := e.Key()
		if !p.synced || p.inflight[key] || p.done[key] {
			continue
		}
		if until, ok := p.blocked[key]; ok && now.Before(until) {
			continue
		}
		p.inflight[key] = true
		fresh := p.fresh[key]
		delete(p.fresh, key)
		n.run(p, e, fresh)
		if n.s.bugDoubleStart {
			if _, start := e.(lifecycle.StartContainer); start {
				// The injected bug (tests only): the start is carried
				// out a second time.
				n.run(p, e, fresh)
			}
		}
	}
}

// run carries out effect e with the ContainerActor's code, now; its
// outcome reaches the shell after the virtual time its calls took.
func (n *Node) run(p *shell, e lifecycle.Effect, fresh bool) {
	n.delay = 0
	podIP := ""
	if sb := p.st.P.Sandbox; sb != nil {
		podIP = sb.Ip
	}
	n.s.check.current = p.uid
	res, err := actors.RunEffect(context.Background(), n.deps, p.uid, e, p.st.Pod, podIP, fresh)
	n.s.check.current = ""
	n.after(n.delay, func() {
		if n.live(p) {
			n.effectDone(p, e, res, err)
		}
	})
}

// effectDone takes an effect's outcome, as podActor.effectDone does.
func (n *Node) effectDone(p *shell, e lifecycle.Effect, res *pb.EffectResult, err error) {
	key := e.Key()
	delete(p.inflight, key)
	if err != nil {
		k := p.retries[key]
		p.retries[key] = k + 1
		delay := min(n.deps.RetryMin<<min(k, 16), n.deps.RetryMax)
		p.blocked[key] = n.s.clock.Now().Add(delay)
		n.after(delay, func() { n.handle(p, &pb.Tick{}) })
		if cri.Retryable(err) {
			return
		}
		n.handle(p, res)
		return
	}
	delete(p.retries, key)
	delete(p.blocked, key)
	n.s.check.effectSucceeded(n, p, e)
	seq := p.st.P.Seq
	n.handle(p, res)
	if n.live(p) && p.st.P.Seq == seq {
		p.done[key] = true
		n.requestList(p)
	}
}

// requestList lists the pod in the runtime for its shell.
func (n *Node) requestList(p *shell) {
	if p.listing {
		return
	}
	p.listing = true
	n.delay = 0
	v, err := n.client.ListPod(context.Background(), p.uid)
	n.after(n.delay, func() {
		if !n.live(p) {
			return
		}
		p.listing = false
		if err != nil {
			n.after(n.deps.RetryMax/4, func() { n.requestList(p) })
			return
		}
		n.lastView[p.uid] = v
		n.observe(p, v)
	})
}

// observe gives the shell a runtime view.
func (n *Node) observe(p *shell, v *cri.PodView) {
	p.synced = true
	clear(p.done)
	n.handle(p, actors.Observed(p.uid, v))
}

// arm sets the pod's one timer to a Tick at at.
func (n *Node) arm(p *shell, at time.Time) {
	if p.timer != nil && p.timerAt.Equal(at) {
		return
	}
	n.s.clock.cancel(p.timer)
	p.timerAt = at
	p.timer = n.after(at.Sub(n.s.clock.Now()), func() {
		p.timer = nil
		n.handle(p, &pb.Tick{})
	})
}

// finish ends the shell once its pod is gone: the final state is compacted
// into a snapshot, then the node forgets it.
func (n *Node) finish(p *shell) {
	if n.s.trace != nil {
		n.s.trace(n, p.uid, "finish")
	}
	p.stopped = true
	n.s.clock.cancel(p.timer)
	if p.sinceSnap > 0 {
		n.snapshot(p)
	}
	delete(n.pods, p.uid)
}

func (n *Node) snapshot(p *shell) {
	err := n.j.SaveSnapshot(context.Background(), &pb.Snapshot{
		Seq: p.st.P.Seq, TimeUnixNano: n.s.clock.Now().UnixNano(), PodUid: p.uid, State: p.st.P,
	})
	if err != nil {
		n.s.fail(n, p.uid, "snapshot: "+err.Error())
		return
	}
	p.sinceSnap = 0
}

// phase is the pod's phase as its shell's state says.
func (n *Node) phase(p *shell) corev1.PodPhase { return lifecycle.Phase(p.st, n.s.clock.Now()) }
