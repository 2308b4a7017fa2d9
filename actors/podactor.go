package actors

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// JournalError is the panic value of a PodActor whose journal is gone
// (Deps.Fatal) or whose state could not be loaded. The supervisor restarts
// the actor, which reloads its state from disk, or stops the node.
type JournalError struct {
	PodUID string
	Err    error
}

func (e *JournalError) Error() string {
	return fmt.Sprintf("journal append for pod %s: %v", e.PodUID, e.Err)
}
func (e *JournalError) Unwrap() error { return e.Err }

// podRemoved tells the Supervisor that a PodActor is done with its pod.
type podRemoved struct{ uid string }

// podActor owns one pod: it is the only writer of the pod's journal stream.
//
// Guarantees: no effect is started and no status published for a state whose
// events are not durable; at most one effect per key is in flight; an effect
// whose failure is transient is retried with back-off, never reported. What
// runs when is the core's (lifecycle.Driver); the actor carries it out.
type podActor struct {
	uid  string
	deps *Deps
	load Loader
	// initial is the state recovery spawned the actor with (nil: load it
	// from the journal); handed to the Driver at Started, which holds the
	// state from then on (state).
	initial *lifecycle.State
	// parent is the Supervisor's context; ctx is this incarnation's,
	// derived from it in Started and cancelled when the actor stops or
	// restarts. Every I/O of the pod (journal, volumes, probes, and its
	// ContainerActors' CRI calls) runs on ctx, so a stop cancels the calls
	// in flight instead of waiting for them (see effectDone.canceled).
	parent context.Context
	ctx    *podContext

	// drv is the pod's executor in the core (lifecycle.Driver): which
	// effect runs, when it is retried, what waits for a runtime view. Made
	// in Started, from the durable state; a restart loses it.
	drv *lifecycle.Driver
	// workers: the pod's ContainerActors at work; nil while there are none,
	// as for a running pod (a Go map keeps its storage once emptied).
	workers map[string]*worker
	timer   clock.Timer
	// stopped: the pod is finished, or the actor stops or restarts;
	// inputs and effect results are not decided any more.
	stopped bool
	// released: the Supervisor was told the pod holds no resources any more.
	released bool
	mode     spawnMode
	// appendFailures counts the appends that failed in a row (disk full,
	// EIO, a read-only file system, ...); a retry is armed while > 0.
	appendFailures int32
	// prober runs the pod's probe workers (nil until a container has probes).
	prober PodProber
	// startedHere holds the keys of creates and starts this incarnation
	// dispatched (see ownedHere); nil while empty, as workers.
	startedHere map[string]bool
	// wait is what a wait for the journal holds (appendFailed); nil but
	// after a failed append, as for every pod while its appends succeed.
	wait *appendWait
	// early holds the commands (the source's wish, an eviction) a withView
	// actor got before its first runtime view, which the Supervisor sends
	// right behind them: they are decided together with that view and
	// journaled in one append, so a rebuilt pod goes from nothing to its
	// adopted state in one decision and one status.
	early []lifecycle.Input
	// sync traces the sync in progress; traceLink is the span of the
	// effect whose result it takes (tracing.go), nil but while that result
	// is handled (a pointer into the result's message: a span context is
	// eight words that every pod's actor would carry).
	sync      *syncTrace
	traceLink *trace.SpanContext
}

// appendWait is a PodActor's wait for the journal after failed appends.
type appendWait struct {
	// retry is the armed appendRetry (nil: none).
	retry clock.Timer
	// inputs are the inputs whose decisions could not be journaled, in
	// order (at most maxFailedInputs; older ones are dropped: they come
	// back level-triggered, see appendRetry).
	inputs []lifecycle.Input
}

const maxFailedInputs = 64

// failedInputs are the inputs waiting for the journal (appendWait.inputs).
func (a *podActor) failedInputs() []lifecycle.Input {
	if a.wait == nil {
		return nil
	}
	return a.wait.inputs
}

// setFailedInputs replaces the inputs waiting for the journal.
func (a *podActor) setFailedInputs(q []lifecycle.Input) {
	if a.wait == nil {
		if len(q) == 0 {
			return
		}
		a.wait = &appendWait{}
	}
	a.wait.inputs = q
	a.dropWait()
}

// armAppendRetry arms an appendRetry after d, unless one is armed.
func (a *podActor) armAppendRetry(ctx actor.Context, d time.Duration) {
	if a.wait == nil {
		a.wait = &appendWait{}
	}
	if a.wait.retry == nil {
		self, root := ctx.Self(), ctx.ActorSystem().Root
		a.wait.retry = a.deps.Clock.AfterFunc(d, func() { root.Send(self, &appendRetry{}) })
	}
}

// dropWait lets the wait go once it holds nothing.
func (a *podActor) dropWait() {
	if a.wait != nil && a.wait.retry == nil && len(a.wait.inputs) == 0 {
		a.wait = nil
	}
}

// spawnMode says what the Supervisor sends a PodActor's first incarnation.
type spawnMode uint8

const (
	// restarted: nothing; the actor asks for its pod and lists the runtime.
	restarted spawnMode = iota
	// withView: its desired state (if any) and a runtime view.
	withView
)

// newPodActor returns the actor of pod uid; parent is the Supervisor's
// context, which the actor's own derives from.
func newPodActor(parent context.Context, uid string, deps *Deps, load Loader, initial *lifecycle.State, mode spawnMode) *podActor {
	return &podActor{
		uid: uid, deps: deps, load: load, initial: initial, mode: mode, parent: parent,
	}
}

// state is the pod's durable state, its Driver's (nil before Started).
func (a *podActor) state() *lifecycle.State {
	if a.drv == nil {
		return nil
	}
	return a.drv.State()
}

// log names the pod by namespace/name once its spec is known, and by UID.
func (a *podActor) log() *zap.Logger {
	if a.state() != nil && a.state().Pod != nil {
		return a.deps.Logger.With(zap.String("pod", a.state().Pod.Namespace+"/"+a.state().Pod.Name), zap.String("podUID", a.uid))
	}
	return a.deps.Logger.With(zap.String("podUID", a.uid))
}

func (a *podActor) Receive(ctx actor.Context) {
	a.receive(ctx)
	a.stopIdleWorkers(ctx)
}

func (a *podActor) receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		if sp, ok := a.deps.spawns.take(ctx.Self().Id); ok {
			a.uid, a.initial, a.mode = sp.uid, sp.initial, sp.mode
		}
		a.ctx = newPodContext(a.parent)
		st := a.initial
		a.initial = nil // the Driver holds the state from now on
		if st == nil {  // new, or restarted: what is on disk is the truth
			var err error
			st, err = a.load(a.ctx, a.uid)
			if err != nil && a.ctx.Err() != nil {
				// Started while the node stops: not a journal failure (no
				// restart); the actor stays idle until it is stopped.
				a.stopped = true
				a.drv = lifecycle.NewDriver(a.deps.Lifecycle, lifecycle.Retry{}, lifecycle.NewState(a.uid))
				return
			}
			if err != nil {
				panic(&JournalError{PodUID: a.uid, Err: err})
			}
		}
		sh := a.deps.driver
		if sh == nil {
			sh = a.deps.driverShared()
		}
		a.drv = lifecycle.NewSharedDriver(sh, st)
		if a.mode == restarted {
			// The previous incarnation's inputs are lost: ask again.
			ctx.Request(ctx.Parent(), &resync{uid: a.uid})
		}
		if a.mode != withView {
			a.requestList(ctx)
		}
	case *actor.Stopping, *actor.Restarting:
		if _, again := m.(*actor.Restarting); again && a.deps.spawns != nil {
			// The next incarnation, which protoactor makes with the same
			// Props, reloads the pod from disk.
			a.deps.spawns.put(ctx.Self().Id, podSpawn{uid: a.uid, mode: restarted})
		}
		// First cancel the pod's context, then stop the ContainerActors
		// and wait for them, that is for their CRI calls in flight, which
		// now return at once (stopWorkers). Nothing is
		// decided or journaled after this (their cancelled results
		// included): the next incarnation starts from the journal.
		a.ctx.Cancel()
		a.stopWorkers(ctx)
		a.stopped = true
		a.stopTimer()
		a.stopProbes()
		if a.wait != nil && a.wait.retry != nil {
			a.wait.retry.Stop()
		}
	case *desire:
		if a.drv != nil {
			a.drv.Offer(m.msg, m.pod)
		}
		a.command(ctx, m.msg)
	case *pb.PodDesired, *pb.PodUndesired, *pb.PodEvict:
		a.command(ctx, m.(lifecycle.Input))
	case *pb.Tick, *pb.ProbeResult:
		a.handle(ctx, m.(lifecycle.Input))
	case *pb.RuntimeObserved:
		a.handleFirst(ctx, m)
	case *timerFired:
		if a.drv != nil {
			a.drv.TimerFired()
		}
		a.handle(ctx, &pb.Tick{})
	case *listed:
		a.replied(ctx, ctx.Sender())
		a.drv.Listed(true)
		a.handleFirst(ctx, m.obs)
	case *effectDone:
		a.traceLink = &m.span
		a.effectDone(ctx, m)
		a.traceLink = nil
	case *retryTick:
		a.handle(ctx, &pb.Tick{})
	case *listFailed:
		// Without a view nothing may run (see synced): try again soon.
		a.replied(ctx, ctx.Sender())
		after := a.drv.Listed(false)
		if m.canceled {
			return // stopping: nothing to try again
		}
		a.log().Warn("cannot list the pod in the runtime; retrying", zap.Error(m.err), zap.Duration("after", after))
		self, root := ctx.Self(), ctx.ActorSystem().Root
		a.deps.Clock.AfterFunc(after, func() { root.Send(self, &refreshNow{}) })
	case *refreshNow:
		a.requestList(ctx)
	case *appendRetry:
		if a.wait != nil {
			a.wait.retry = nil
		}
		a.retryFailed(ctx)
		a.dropWait()
	}
}

// retryFailed decides the inputs whose appends failed again, in order. When
// all of them are journaled (or now decide nothing), the wait is over. The
// source's wish (resync) and the runtime's view are asked for again too:
// they bring back whatever inputs were dropped, level-triggered.
func (a *podActor) retryFailed(ctx actor.Context) {
	q := a.failedInputs()
	a.setFailedInputs(nil)
	failures := a.appendFailures
	for i, in := range q {
		a.handle(ctx, in)
		if a.appendFailures > failures {
			// Failed again: keep the rest for the next retry, in order.
			a.setFailedInputs(append(a.failedInputs(), q[i+1:]...))
			return
		}
		failures = a.appendFailures // 0 once an append succeeded
	}
	if len(q) > 0 {
		a.appendSucceeded()
	} else if a.appendFailures > 0 {
		// Until the fresh view below is decided: if its append fails too,
		// appendFailed arms the next retry; this one covers a lost reply.
		a.armAppendRetry(ctx, a.deps.RetryMax)
	}
	ctx.Request(ctx.Parent(), &resync{uid: a.uid})
	a.requestList(ctx)
}

// appendRetry asks the PodActor to try its pod again after failed appends.
type appendRetry struct{}

// appendFailed handles an append that failed without writing anything (the
// Journal's contract): the decision is dropped, so the state stays the
// durable one and no effect of it runs; the pod waits and tries again with
// back-off (RetryMin doubling to RetryMax), and the failure is reported
// (AppendHealth: /healthz). Inputs that arrive meanwhile are decided and
// appended as usual: the first append that succeeds ends the wait.
func (a *podActor) appendFailed(ctx actor.Context, ins []lifecycle.Input, err error) {
	for _, in := range ins {
		switch in.(type) {
		case *pb.PodDesired, *pb.PodUndesired, *pb.PodEvict:
			// Commands: kept to be decided again. Runtime views, effect
			// results, ticks and probe results are not: a stale one decided
			// after a newer outcome would undo it; they come back fresh (the
			// runtime is listed again, timers and probes are re-derived).
			q := a.failedInputs()
			if len(q) == maxFailedInputs {
				q = q[1:]
			}
			a.setFailedInputs(append(q, in))
		}
	}
	n := a.appendFailures
	a.appendFailures++
	delay := min(a.deps.RetryMin<<min(n, 16), a.deps.RetryMax)
	if n == 0 {
		a.log().Error("journal append failed; the pod waits and retries", zap.Error(err), zap.Duration("retryAfter", delay))
	} else {
		a.log().Warn("journal append failed again", zap.Int32("failures", a.appendFailures), zap.Error(err), zap.Duration("retryAfter", delay))
	}
	if a.deps.AppendHealth != nil {
		a.deps.AppendHealth.AppendFailed(a.uid, err)
	}
	a.armAppendRetry(ctx, delay)
}

// appendSucceeded ends a wait for the journal (inputs still queued are
// retried when the armed retry fires).
func (a *podActor) appendSucceeded() {
	if a.appendFailures == 0 {
		return
	}
	a.log().Info("journal appends succeed again; the pod resumes", zap.Int32("failures", a.appendFailures))
	a.appendFailures = 0
	if a.deps.AppendHealth != nil {
		a.deps.AppendHealth.AppendSucceeded(a.uid)
	}
}

type retryTick struct{}

// refreshNow asks the PodActor to list its pod again.
type refreshNow struct{}

// effectDone takes a ContainerActor's report. A failed effect is not tried
// again before a back-off (per key, doubling from RetryMin to RetryMax); a
// transient failure (runtime unavailable, timeout) is only retried, a
// definitive one also goes to the core, which may decide differently.
//
// An effect cut short by the pod's context (m.canceled: the actor or the
// node is stopping) has no outcome: it is neither journaled nor retried nor
// counted in the back-off. It stays outstanding in the state, whose intent
// (SandboxRequested, ContainerRequested, ...) the journal holds, and the
// next incarnation derives it again and looks for what the cut call may
// have left behind (the write-ahead intent, see DESIGN.md).
func (a *podActor) effectDone(ctx actor.Context, m *effectDone) {
	ours := a.replied(ctx, ctx.Sender())
	key := m.effect.Key()
	if m.canceled || a.stopped {
		// A result that came back as the actor stops: nothing can be
		// journaled now (see handle), nor retried; the journal's intent
		// brings it back on the next start.
		if ours {
			a.drv.Cancelled(m.effect)
		}
		a.log().Debug("effect cancelled: the pod's actor is stopping", zap.String("effect", key), zap.Error(m.err))
		return
	}
	now := a.deps.Clock.Now()
	transient := m.err != nil && cri.Retryable(m.err)
	rd, retryAfter := a.drv.Done(m.effect, m.result, m.err, transient, now)
	if m.err != nil {
		a.armRetry(ctx, retryAfter)
		if transient {
			// Warned at the first failure and then at each back-off
			// step's doubling, not at every retry.
			if r, ok := a.deps.Events.(RetrySink); ok && a.state() != nil && a.state().Pod != nil {
				r.Retrying(a.state().Pod, m.effect, m.err)
			}
			if retryAfter == a.deps.RetryMin || retryAfter < a.deps.RetryMax {
				a.log().Warn("effect failed, will retry", zap.String("effect", key), zap.Duration("after", retryAfter), zap.Error(m.err))
			} else {
				a.log().Debug("effect failed, will retry", zap.String("effect", key), zap.Duration("after", retryAfter), zap.Error(m.err))
			}
			return
		}
		a.log().Warn("effect failed", zap.String("effect", key), zap.Duration("retryAfter", retryAfter), zap.Error(m.err))
	}
	a.carryOut(ctx, []lifecycle.Input{m.result}, rd, now)
}

// command handles the source's wish or an eviction: held for the first
// runtime view by an actor spawned withView (see early), else decided now.
func (a *podActor) command(ctx actor.Context, in lifecycle.Input) {
	if a.mode == withView && a.drv != nil && !a.drv.Synced() && !a.stopped {
		a.early = append(a.early, in)
		return
	}
	a.handle(ctx, in)
}

// handleFirst handles a runtime view, with the commands held for it (early).
func (a *podActor) handleFirst(ctx actor.Context, obs *pb.RuntimeObserved) {
	ins := append(a.early, lifecycle.Input(obs))
	a.early = nil
	a.handle(ctx, ins[0], ins[1:]...)
}

// handle runs inputs through the core (one, but for an actor's first view
// and the commands held for it): decide, append, adopt, act.
func (a *podActor) handle(ctx actor.Context, in lifecycle.Input, more ...lifecycle.Input) {
	if a.stopped {
		return
	}
	now := a.deps.Clock.Now()
	a.carryOut(ctx, append([]lifecycle.Input{in}, more...), a.drv.Step(in, now, more...), now)
}

// carryOut makes the decision rd (of ins, at now) durable, adopts it
// (Driver.Advance) and carries out the work it makes ready.
func (a *podActor) carryOut(ctx actor.Context, ins []lifecycle.Input, rd lifecycle.Ready, now time.Time) {
	in, last := ins[0], ins[len(ins)-1]
	if a.deps.Worker != nil {
		op := "sync"
		if _, desired := in.(*pb.PodDesired); desired {
			op = "update"
			if a.state() == nil || a.state().Pod == nil {
				op = "create"
			}
		}
		defer func() { a.deps.Worker.Synced(op, a.deps.Clock.Since(now)) }()
	}
	if rd.State() == nil {
		return
	}
	a.beginSync(in, now, rd.Events, rd.State())
	defer a.endSync()
	if len(rd.Events) > 0 {
		appendStart := a.deps.Clock.Now()
		if err := a.deps.Journal.Append(a.ctx, a.uid, rd.Events...); err != nil {
			if a.ctx.Err() != nil {
				// Stopping: an append cut short by its context wrote
				// nothing (Journal.Append). Not a journal failure: the
				// decision is dropped, and the next start decides again
				// from what is durable.
				a.syncFailed(err)
				return
			}
			if a.deps.Fatal != nil && a.deps.Fatal(err) {
				panic(&JournalError{PodUID: a.uid, Err: err}) // the journal is gone: see podStrategy
			}
			a.syncFailed(err)
			a.appendFailed(ctx, ins, err)
			if w := a.drv.Advance(rd, err); w.List {
				a.sendList(ctx)
			}
			return
		}
		a.appendSucceeded()
		if a.deps.Worker != nil {
			a.deps.Worker.Appended(len(rd.Events), a.deps.Clock.Since(appendStart))
		}
	}
	before := a.state()
	w := a.drv.Advance(rd, nil)
	if w.Appended {
		if rebuilt := rebuiltBy(last, before, a.state()); rebuilt != "" {
			a.rebuilt(rebuilt)
		}
		if a.deps.Events != nil {
			a.deps.Events.Recorded(a.state().Pod, a.ownedHere(rd.Events))
		}
	} else if _, view := in.(*pb.RuntimeObserved); view && a.appendFailures > 0 && len(a.failedInputs()) == 0 {
		a.appendSucceeded() // a fresh view leaves nothing to journal: the wait is over
	}
	if w.Publish {
		a.publish(ctx, now)
	}
	if w.Finish {
		a.finish(ctx)
		return
	}
	if w.Snapshot {
		a.snapshot(now)
	}
	a.syncProbes(ctx)
	a.dispatch(ctx, w)
	if w.List {
		a.sendList(ctx)
	}
}

// dispatch carries out the effects and the timer w makes ready.
func (a *podActor) dispatch(ctx actor.Context, w lifecycle.Work) {
	if a.ctx.Err() != nil {
		return // stopping: nothing new starts (see effectDone)
	}
	if !w.TimerAt.IsZero() {
		a.arm(ctx, w.TimerAt)
	}
	for _, d := range w.Run {
		e := d.Effect
		switch e.(type) {
		case lifecycle.CreateContainer, lifecycle.StartContainer:
			if a.startedHere == nil {
				a.startedHere = map[string]bool{}
			}
			a.startedHere[e.Key()] = true
		}
		if _, pull := e.(lifecycle.PullImage); !pull && a.deps.Events != nil {
			// A pull is told by the ContainerActor, once it knows the
			// image is not present.
			a.deps.Events.Acting(a.state().Pod, e)
		}
		a.toWorker(ctx, effectWorker(e), &runEffect{effect: e, pod: a.state().Pod, podIP: a.podIP(), fresh: d.Fresh, retry: d.Retry})
	}
}

// worker is a ContainerActor of the pod and the number of its messages
// whose reply is still due. Idle workers are stopped (an idle actor costs
// about a kilobyte; a running pod's workers are idle).
type worker struct {
	pid     *actor.PID
	pending int
}

// toWorker sends msg to the named ContainerActor, spawning it if needed.
//
// The ContainerActors are spawned from the actor system's root, not as the
// PodActor's children: protoactor keeps a parent's children set (a map and
// a slice, with the context extras that hold them: about 600 bytes) for as
// long as the parent lives, emptied or not, and a running pod's workers are
// all stopped. What being children gave, the PodActor does itself: a
// worker reports to the PodActor's PID (containerActor.pod); at a stop or
// restart, stopWorkers stops the workers still at work and waits for them;
// a worker's panic is handled as a child's was, by protoactor's default
// strategy (restart).
func (a *podActor) toWorker(ctx actor.Context, name string, msg any) {
	w := a.workers[name]
	if w == nil {
		uid, deps, pctx, self := a.uid, a.deps, a.ctx, ctx.Self()
		w = &worker{pid: ctx.ActorSystem().Root.SpawnPrefix(actor.PropsFromProducer(func() actor.Actor {
			return &containerActor{ctx: pctx, uid: uid, deps: deps, pod: self}
		}, deps.mailbox()...), self.Id+"/"+name)}
		if a.workers == nil {
			a.workers = map[string]*worker{}
		}
		a.workers[name] = w
	}
	if m, ok := msg.(*runEffect); ok {
		m.trace = a.traceEffect() // the sync that starts an effect is its parent (tracing.go)
	}
	w.pending++
	ctx.Send(w.pid, msg)
}

// replied accounts for a reply of the worker from. Replies of a previous
// incarnation's workers are ignored: it reports whether from is one of this
// incarnation's. A worker left idle is stopped at the end of the turn
// (stopIdleWorkers), not at once: the reply usually leads to the next
// effect for the same container in the same turn (an image pulled, then
// the container created, then started), which then goes to the same worker
// instead of a new one. A spawn and a stop cost protoactor a process
// registration, a mailbox and four system messages on goroutines of their
// own (about 7 % of a starting node's CPU with three of each per pod).
func (a *podActor) replied(_ actor.Context, from *actor.PID) bool {
	for _, w := range a.workers {
		if w.pid.Equal(from) {
			w.pending--
			return true
		}
	}
	return false
}

// stopIdleWorkers stops the workers with no reply due, at the end of each
// turn: between turns, as before, a pod has workers only while they work.
func (a *podActor) stopIdleWorkers(ctx actor.Context) {
	for name, w := range a.workers {
		if w.pending <= 0 {
			ctx.Stop(w.pid)
			delete(a.workers, name)
		}
	}
	if len(a.workers) == 0 {
		a.workers = nil
	}
}

// stopWorkers stops the ContainerActors still at work and waits until each
// has stopped: the pod's context is cancelled before, so their CRI calls in
// flight return at once, and none outlives this incarnation (as protoactor
// waits for a stopping actor's children). Idle workers were stopped when
// they went idle (replied) and do no I/O. A worker whose call does not
// return is waited for, with a warning every ten seconds (StopFuture's
// timeout).
func (a *podActor) stopWorkers(ctx actor.Context) {
	root := ctx.ActorSystem().Root
	pids := make([]*actor.PID, 0, len(a.workers))
	for _, w := range a.workers {
		pids = append(pids, w.pid)
		root.Stop(w.pid)
	}
	a.workers = nil
	for _, pid := range pids {
		// A stopped actor answers a new watch with Terminated at once.
		for root.StopFuture(pid).Wait() != nil {
			a.log().Warn("a container actor is still in a call after its pod's context was cancelled; waiting for it", zap.String("actor", pid.Id))
		}
	}
}

// dropStoppedChildren lets the GC have the children an actor stopped (the
// Supervisor's PodActors; a PodActor's ContainerActors are not its
// children, see toWorker). protoactor takes a stopped child out of its
// parent's children set (PIDSet.Remove) by shortening the set's slice of
// PIDs, without clearing the slot it frees; and a PID caches its process.
// So the Supervisor's last finished PodActor (with its pod's state) stayed
// reachable until the next spawn. The slots past the set's length
// are no part of it (Add overwrites them): clearing them changes nothing
// but what can be freed. Called on each *actor.Terminated, which protoactor
// delivers after the removal.
func dropStoppedChildren(ctx actor.Context) {
	kids := ctx.Children()
	clear(kids[len(kids):cap(kids)])
}

// requestList lists the pod in the runtime, unless a listing is on its way.
func (a *podActor) requestList(ctx actor.Context) {
	if a.deps.Lister != nil && a.drv.RequestList() {
		a.toWorker(ctx, "sandbox", &refresh{})
	}
}

// sendList lists the pod for a listing the Driver asked for (Work.List).
func (a *podActor) sendList(ctx actor.Context) {
	if a.deps.Lister != nil {
		a.toWorker(ctx, "sandbox", &refresh{})
	}
}

// timerFired is the pod's timer (Work.TimerAt).
type timerFired struct{}

// arm sets the pod's one timer to fire at at (replacing the one before).
func (a *podActor) arm(ctx actor.Context, at time.Time) {
	a.stopTimer()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timer = a.deps.Clock.AfterFunc(at.Sub(a.deps.Clock.Now()), func() { root.Send(self, &timerFired{}) })
}

func (a *podActor) armRetry(ctx actor.Context, d time.Duration) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.deps.Clock.AfterFunc(d, func() { root.Send(self, &retryTick{}) })
}

func (a *podActor) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

func (a *podActor) publish(ctx actor.Context, now time.Time) {
	if a.deps.Admission != nil && !a.released {
		if ph := lifecycle.Phase(a.state(), now); ph == corev1.PodSucceeded || ph == corev1.PodFailed {
			a.released = true
			ctx.Send(ctx.Parent(), &podReleased{uid: a.uid})
		}
	}
	if a.deps.Status == nil {
		return
	}
	u := PodUpdate{UID: a.uid, Seq: a.state().P.Seq, Removed: a.state().P.Removed}
	if a.state().P.AcceptedAtUnixNano != 0 {
		u.AcceptedAt = time.Unix(0, a.state().P.AcceptedAtUnixNano)
	}
	if a.state().Pod != nil {
		u.View = lifecycle.ViewStatus(a.state(), lifecycle.StatusEnv{RuntimeName: a.deps.RuntimeName, HostIP: a.deps.HostIP, Now: now})
		st := u.View.Status()
		u.Pod, u.Status = a.state().Pod, &st // the pod is shared and never mutated (see PodUpdate)
	}
	a.deps.Status.PodStatus(u)
}

// snapshot compacts the pod's events; a failure is logged and retried later.
func (a *podActor) snapshot(now time.Time) {
	err := a.deps.Journal.SaveSnapshot(a.ctx, &pb.Snapshot{
		Seq: a.state().P.Seq, TimeUnixNano: now.UnixNano(), PodUid: a.uid, State: a.state().Snapshot(),
	})
	if err != nil {
		a.log().Warn("snapshot", zap.Error(err))
		return
	}
	a.drv.Snapshotted()
}

// finish ends the actor once its pod is done: the final state is compacted
// into a snapshot (kept for `actorlet journal`), then the Supervisor forgets
// it. What the pod had on the node (volumes, pod cgroup, log directory) is
// gone already: a removed pod is done only once its clean-up, an effect of
// the core (lifecycle.CleanUpPod, carried out by the sandbox's
// ContainerActor), is journaled (PodCleanedUp).
func (a *podActor) finish(ctx actor.Context) {
	a.stopped = true
	a.stopTimer()
	a.stopProbes()
	if a.drv.SinceSnapshot() > 0 {
		a.snapshot(a.deps.Clock.Now())
	}
	ctx.Send(ctx.Parent(), &podRemoved{uid: a.uid})
	ctx.Stop(ctx.Self())
}

// podIP is the IP of the pod's current sandbox, or "".
func (a *podActor) podIP() string {
	if sb := a.state().P.Sandbox; sb != nil {
		return sb.Ip
	}
	return ""
}

// ownedHere returns events for the event sink: a ContainerCreated or
// ContainerStarted the runtime's view adopted (Recovered) while this
// incarnation's own create or start was on its way is this node's doing,
// not a recovery, and is recorded as such (Created, Started). The journal
// keeps the events as they are.
func (a *podActor) ownedHere(events []*pb.Envelope) []*pb.Envelope {
	out := events
	copied := false
	for i, env := range events {
		var key string
		recovered := false
		switch ev := env.GetEvent().GetKind().(type) {
		case *pb.Event_ContainerCreated:
			c := ev.ContainerCreated
			key, recovered = lifecycle.CreateContainer{Name: c.Name, Attempt: c.Attempt}.Key(), c.Recovered
		case *pb.Event_ContainerStarted:
			st := ev.ContainerStarted
			key, recovered = lifecycle.StartContainer{ID: st.ContainerId}.Key(), st.Recovered
		default:
			continue
		}
		mine := a.startedHere[key]
		delete(a.startedHere, key)
		if len(a.startedHere) == 0 {
			a.startedHere = nil
		}
		if !recovered || !mine {
			continue
		}
		if !copied {
			out, copied = slices.Clone(events), true
		}
		cp := proto.Clone(env).(*pb.Envelope)
		switch ev := cp.GetEvent().GetKind().(type) {
		case *pb.Event_ContainerCreated:
			ev.ContainerCreated.Recovered = false
		case *pb.Event_ContainerStarted:
			ev.ContainerStarted.Recovered = false
		}
		out[i] = cp
	}
	return out
}

// rebuiltBy returns what was lost if in (a view marked rebuild) adopted the
// runtime's objects into a state that had none, or "".
func rebuiltBy(in lifecycle.Input, before, after *lifecycle.State) string {
	obs, ok := in.(*pb.RuntimeObserved)
	if !ok || !obs.GetRebuild() || before.HasRuntimeHistory() || !after.HasRuntimeHistory() {
		return ""
	}
	return obs.GetDamage()
}

// rebuilt reports a pod whose lost history was just rebuilt from the
// runtime and journaled: an error log naming the pod and the damage, and
// the RebuildSink (metric, API event).
func (a *podActor) rebuilt(damage string) {
	fields := []zap.Field{zap.String("uid", a.uid), zap.String("damage", damage)}
	if pod := a.state().Pod; pod != nil {
		fields = append(fields, zap.String("pod", pod.Namespace+"/"+pod.Name))
	}
	running := 0
	for _, r := range a.state().P.Containers {
		if r.Phase == pb.ContainerPhase_CONTAINER_RUNNING {
			running++
		}
	}
	fields = append(fields, zap.Int("runningAdopted", running))
	a.deps.Logger.Error("pod rebuilt from the runtime: its journal history was lost; running containers adopted, nothing restarted", fields...)
	if a.deps.Rebuilt != nil {
		a.deps.Rebuilt.Rebuilt(a.state().Pod, damage)
	}
}
