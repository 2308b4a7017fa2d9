package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Driver is the pod's executor, in the core: around Decide it keeps what
// may be carried out next. It hands out an outstanding effect only
//   - once a runtime view has arrived (after a crash the runtime may already
//     have done what the journal still shows as outstanding),
//   - when no effect of the same key is in flight,
//   - when the effect's back-off after a failure has passed (Retry.Min
//     doubling to Retry.Max per failure in a row), and
//   - when it has not succeeded since the last runtime view without moving
//     the journal (its outcome shows in the next view: the Driver asks for
//     one);
//
// and it says which creations are fresh (journaled by this Driver and not
// tried yet: no earlier try can have left an object behind, so they are
// created without a lookup), when the pod's one timer fires, when the
// runtime must be listed, when to snapshot and when the pod is finished:
// only once it is Done, that is for a removed pod once its clean-up
// (CleanUpPod) is journaled (PodCleanedUp), never at its removal.
//
// It is pure and deterministic: no I/O, time only from its callers. A shell
// (the PodActor, the simulation's shell) uses it as etcd raft's
// Ready/Advance:
//
//	rd := d.Step(in, now)               // or d.Done(effect, result, err, ...)
//	var err error
//	if len(rd.Events) > 0 {
//		err = journal.Append(rd.Events) // durable before anything else
//	}
//	w := d.Advance(rd, err)             // adopt (or drop) the decision
//	// carry out w: w.Run, w.TimerAt, w.List, w.Snapshot, w.Finish
//
// A Driver is one incarnation's memory: a crash loses it, and a new Driver
// on the state replayed from the journal derives the outstanding effects
// again (none of them fresh). Not safe for concurrent use.
type Driver struct {
	shared *Shared
	state  *State

	// The keyed sets below are nil while empty (see put, drop): a running
	// pod has nothing in them, and a Go map keeps its storage when emptied.
	inflight map[string]bool
	done     map[string]bool
	fresh    map[string]bool
	retries  map[string]int
	blocked  map[string]time.Time

	// offer: the source's object of a PodDesired to decide (Offer).
	offer struct {
		in  *pb.PodDesired
		pod *corev1.Pod
	}

	synced    bool
	listing   bool
	published bool
	timerAt   time.Time
	sinceSnap int
}

// Retry is the back-off of failed effects: Min after the first failure of a
// key, doubling per failure in a row up to Max. Snapshot is how many events
// the Driver lets pass between two snapshots (0: never asks).
type Retry struct {
	Min, Max time.Duration
	Snapshot int
}

// Shared is what the Drivers of a node's pods have in common: the core's
// Config and the back-off. It is read only once a Driver has it.
type Shared struct {
	Config Config
	Retry  Retry
}

// NewDriver returns the Driver of the pod in st (as loaded from the journal).
func NewDriver(cfg Config, retry Retry, st *State) *Driver {
	return NewSharedDriver(&Shared{Config: cfg, Retry: retry}, st)
}

// NewSharedDriver is NewDriver with settings shared by many Drivers, as a
// node's pods share them: a Driver holds a pointer to them, not its own
// copy (80 bytes for every pod).
func NewSharedDriver(sh *Shared, st *State) *Driver {
	return &Driver{shared: sh, state: st}
}

// State is the pod's durable state (never changed in place).
func (d *Driver) State() *State { return d.state }

// Ready is a decision to make durable: Events go to the journal, in order,
// before Advance; nothing of it is carried out before.
type Ready struct {
	// Events to append, in order (none: Advance at once).
	Events []*pb.Envelope
	dec    *Decision
	now    time.Time
	// doneKey: the effect whose success this decision takes.
	doneKey string
}

// State is the pod's state once rd is adopted (nil: rd decides nothing).
func (rd Ready) State() *State {
	if rd.dec == nil {
		return nil
	}
	return rd.dec.State
}

// Work is what a shell carries out after Advance, in this order.
type Work struct {
	// Appended: the decision's events are durable and its state adopted:
	// tell the event sinks, publish the status.
	Appended bool
	// Publish: the pod's status is news (it changed, or this Driver never
	// published it).
	Publish bool
	// Finish: the pod is done (removed and cleaned up, see CleanUpPod, or
	// rejected with nothing created): snapshot it if SinceSnapshot > 0,
	// forget it. What it had on the node is gone already (PodCleanedUp).
	// Nothing else of this Work is set.
	Finish bool
	// Snapshot: compact the pod's events (Snapshotted once saved).
	Snapshot bool
	// Run are the effects to start now, in order.
	Run []Dispatch
	// TimerAt, when not zero, is when the pod's one timer is to fire now
	// (replacing the one armed before): step a Tick then (TimerFired).
	TimerAt time.Time
	// List: ask the runtime for a fresh view of the pod, then Listed.
	List bool
}

// Dispatch is one effect to carry out.
type Dispatch struct {
	Effect Effect
	// Fresh: an intent journaled by this Driver and never tried. A fresh
	// creation is made without looking for what an earlier try left; a
	// fresh StopContainer runs the container's PreStop hook (a stop that is
	// not fresh was tried before, or before a crash: the hook is not run
	// again).
	Fresh bool
	// Retry: an earlier try of this key failed.
	Retry bool
}

// Offer hands over the source's own object of in, a PodDesired about to
// be stepped (its PodJson encodes pod): if decoding in gives a pod deeply
// equal to it, the state keeps pod as its spec instead of the decoding, so
// that the source and the core share one copy. Equal objects behave the
// same: what is decided and journaled does not change. Only the next Step
// of in uses it; pod must never be changed by anyone from then on.
func (d *Driver) Offer(in *pb.PodDesired, pod *corev1.Pod) {
	d.offer.in, d.offer.pod = in, pod
}

// Step decides in at now. A *pb.RuntimeObserved also opens the way for
// effects (the first view) and for those that succeeded since the last one.
// With more inputs, each is decided on the state the one before decided,
// and their events are made durable together (one append): a pod's first
// view with the commands that came before it.
func (d *Driver) Step(in Input, now time.Time, more ...Input) Ready {
	var dec Decision
	st := d.state
	for i, next := range append([]Input{in}, more...) {
		if _, view := next.(*pb.RuntimeObserved); view {
			d.synced = true
			d.done = nil
		}
		cur := st
		if pd, ok := next.(*pb.PodDesired); ok && pd == d.offer.in {
			c := *st
			c.source, cur = d.offer.pod, &c
		}
		nd := d.shared.Config.Decide(cur, next, now)
		if i > 0 {
			nd.Events = append(dec.Events, nd.Events...)
		}
		dec, st = nd, nd.State
	}
	d.offer.in, d.offer.pod = nil, nil
	return Ready{Events: dec.Events, dec: &dec, now: now}
}

// Done takes the outcome of a dispatched effect at now. After a failure the
// key backs off, and retryAfter says when to step a Tick; a transient
// failure (the runtime unavailable, a timeout) is only retried, its Ready
// empty; a definitive one is decided (res). A success is decided (res).
func (d *Driver) Done(e Effect, res *pb.EffectResult, err error, transient bool, now time.Time) (rd Ready, retryAfter time.Duration) {
	key := e.Key()
	drop(&d.inflight, key)
	if err != nil {
		n := d.retries[key]
		put(&d.retries, key, n+1)
		retryAfter = min(d.shared.Retry.Min<<min(n, 16), d.shared.Retry.Max)
		put(&d.blocked, key, now.Add(retryAfter))
		if transient {
			return Ready{now: now}, retryAfter
		}
		return d.Step(res, now), retryAfter
	}
	drop(&d.retries, key)
	drop(&d.blocked, key)
	rd = d.Step(res, now)
	rd.doneKey = key
	return rd, 0
}

// Cancelled takes back an effect cut short by the shell's stop: it has no
// outcome, and the journal's intent brings it back on the next start.
func (d *Driver) Cancelled(e Effect) { drop(&d.inflight, e.Key()) }

// Advance adopts rd once its events are durable (appendErr nil) and returns
// the work it makes ready. A failed append (which wrote nothing) drops the
// decision: the state stays the durable one and nothing of it runs.
func (d *Driver) Advance(rd Ready, appendErr error) Work {
	var w Work
	if rd.dec == nil {
		return w
	}
	if rd.doneKey != "" && (appendErr != nil || len(rd.Events) == 0) {
		// Done, but the journal did not move: the outcome will show in
		// the runtime's next view. Not repeated before that.
		put(&d.done, rd.doneKey, true)
		w.List = d.wantList()
	}
	if appendErr != nil && len(rd.Events) > 0 {
		return w
	}
	dec := rd.dec
	wasRemoved := d.state.P.Removed
	d.state = dec.State
	if len(dec.Events) > 0 {
		// A removed pod's status went out with its removal: its clean-up
		// is no news, unless this Driver never published it (recovered).
		w.Appended = true
		w.Publish = !wasRemoved || !d.state.P.Removed || !d.published
		d.published = true
		d.sinceSnap += len(dec.Events)
		d.markFresh(dec.Events)
		if d.state.Done() {
			return Work{Appended: true, Publish: w.Publish, Finish: true}
		}
		w.Snapshot = d.shared.Retry.Snapshot > 0 && d.sinceSnap >= d.shared.Retry.Snapshot
	} else {
		if d.state.P.Removed && d.state.Done() && len(dec.Effects) == 0 {
			return Work{Finish: true} // a stale view of a pod already gone
		}
		if !d.published && !d.state.P.Removed {
			w.Publish, d.published = true, true // a recovered pod: news to this process
		}
	}
	for _, e := range dec.Effects {
		if t, ok := e.(ArmTimer); ok {
			if !d.timerAt.Equal(t.At) {
				d.timerAt, w.TimerAt = t.At, t.At
			}
			continue
		}
		key := e.Key()
		if !d.synced || d.inflight[key] || d.done[key] {
			continue
		}
		if until, ok := d.blocked[key]; ok && rd.now.Before(until) {
			continue
		}
		put(&d.inflight, key, true)
		w.Run = append(w.Run, Dispatch{Effect: e, Fresh: d.fresh[key], Retry: d.retries[key] > 0})
		drop(&d.fresh, key)
	}
	return w
}

// markFresh notes the creations just journaled (see Dispatch.Fresh).
func (d *Driver) markFresh(events []*pb.Envelope) {
	for _, env := range events {
		switch ev := env.GetEvent().GetKind().(type) {
		case *pb.Event_SandboxRequested:
			put(&d.fresh, RunSandbox{Attempt: ev.SandboxRequested.Attempt}.Key(), true)
		case *pb.Event_ContainerRequested:
			r := ev.ContainerRequested
			put(&d.fresh, CreateContainer{Name: r.Name, Attempt: r.Attempt}.Key(), true)
		case *pb.Event_ContainerStopRequested:
			put(&d.fresh, StopContainer{ID: ev.ContainerStopRequested.ContainerId}.Key(), true)
		}
	}
}

// RequestList reports whether the shell should list the pod now (false:
// a listing is on its way).
func (d *Driver) RequestList() bool { return d.wantList() }

func (d *Driver) wantList() bool {
	if d.listing {
		return false
	}
	d.listing = true
	return true
}

// Listed ends a listing. On success, step the view it brought (Step);
// after a failure nothing may run without a view: list again after
// retryAfter (RequestList).
func (d *Driver) Listed(ok bool) (retryAfter time.Duration) {
	d.listing = false
	if ok {
		return 0
	}
	return d.shared.Retry.Max / 4
}

// TimerFired notes that the pod's timer fired (step a Tick now).
func (d *Driver) TimerFired() { d.timerAt = time.Time{} }

// Snapshotted notes a saved snapshot of State.
func (d *Driver) Snapshotted() { d.sinceSnap = 0 }

// SinceSnapshot is the number of events journaled since the last snapshot.
func (d *Driver) SinceSnapshot() int { return d.sinceSnap }

// Synced reports whether a runtime view has arrived.
func (d *Driver) Synced() bool { return d.synced }

// put sets (*m)[key], making the map if it is nil.
func put[V any](m *map[string]V, key string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = v
}

// drop deletes key from *m, and lets the map go once it is empty.
func drop[V any](m *map[string]V, key string) {
	delete(*m, key)
	if len(*m) == 0 {
		*m = nil
	}
}
