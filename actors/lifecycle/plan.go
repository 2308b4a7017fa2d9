package lifecycle

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// plan records the next intents (as events) and returns the effects
// outstanding in the state. Decide calls it until it records nothing new.
func (d *decider) plan() []Effect {
	p := d.s.P
	var fx effects
	d.strays(&fx)
	if p.Removed {
		// Only leftovers that a stale view still shows, and then the
		// pod's clean-up.
		d.cleanUp(&fx)
		return fx.list
	}
	switch {
	case p.Terminating || (d.s.Pod == nil && !p.Rejected):
		d.planTermination(&fx)
	case p.Rejected:
		// Never started: nothing to run or tear down.
	default:
		d.planRun(&fx)
	}
	if !fx.timer.IsZero() {
		fx.list = append(fx.list, ArmTimer{At: fx.timer})
	}
	return fx.list
}

type effects struct {
	list  []Effect
	timer time.Time
}

func (f *effects) add(e Effect) { f.list = append(f.list, e) }

func (f *effects) wakeAt(t time.Time) {
	if f.timer.IsZero() || t.Before(f.timer) {
		f.timer = t
	}
}

// planRun drives an accepted pod towards running all its containers.
func (d *decider) planRun(fx *effects) {
	p := d.s.P
	d.checkActiveDeadline(fx)
	if p.DeadlineExceeded {
		d.planDeadlineKill(fx)
		return
	}
	if !finished(d.s, d.now) {
		d.allocateResize()
	}
	d.retireOldSandboxes(fx)
	cur := p.Sandbox
	switch {
	case cur == nil:
		if d.sandboxHooksPass(fx) {
			d.requestSandbox()
		}
		return
	case cur.Phase == pb.SandboxPhase_SANDBOX_REQUESTED:
		fx.add(RunSandbox{Attempt: cur.Attempt})
		return
	case cur.Phase == pb.SandboxPhase_SANDBOX_FAILED:
		// Lost or failed: stop what still runs in it, then a new attempt.
		if d.stopLive(fx, d.cfg.OrphanGrace) {
			return
		}
		if finished(d.s, d.now) {
			// Nothing is to run again (the kubelet makes no new sandbox
			// for such a pod either): the sandbox is stopped and kept,
			// with the exited containers in it.
			if cur.Id != "" {
				fx.add(StopSandbox{ID: cur.Id})
			}
			return
		}
		if retry := time.Unix(0, cur.RetryAtUnixNano); cur.RetryAtUnixNano != 0 && retry.After(d.now) {
			fx.wakeAt(retry)
			return
		}
		if d.sandboxHooksPass(fx) {
			d.requestSandbox()
		}
		return
	case cur.Phase != pb.SandboxPhase_SANDBOX_READY:
		return // stopped: the pod has finished
	}
	if finished(d.s, d.now) {
		fx.add(StopSandbox{ID: cur.Id})
		return
	}
	if d.planInit(fx, cur) {
		for i := range d.s.Pod.Spec.Containers {
			d.planContainer(fx, &d.s.Pod.Spec.Containers[i], cur)
		}
	}
	d.planEphemeral(fx, cur) // whether or not the init containers are done, as the kubelet
	d.planResize(fx)
	d.completeResize()
	d.collectDead(fx)
}

func (d *decider) planContainer(fx *effects, spec *corev1.Container, sb *pb.SandboxRecord) {
	r := d.s.P.Containers[spec.Name]
	if r == nil {
		r = &pb.ContainerRecord{Name: spec.Name}
	}
	switch r.Phase {
	case pb.ContainerPhase_CONTAINER_REQUESTED:
		fx.add(CreateContainer{Name: r.Name, Attempt: r.Attempt, SandboxID: sb.Id, RestartCount: r.RestartCount})
		return
	case pb.ContainerPhase_CONTAINER_CREATED:
		fx.add(StartContainer{Name: r.Name, Attempt: r.Attempt, ID: r.Id})
		return
	case pb.ContainerPhase_CONTAINER_RUNNING:
		if r.KillReason != "" {
			d.stop(fx, r, d.killGrace(spec, r.KillReason), r.KillReason)
		} else {
			d.hookGate(fx, StageAfterStart, r.Name, r.Attempt, time.Time{})
		}
		return
	case pb.ContainerPhase_CONTAINER_EXITED:
		if !d.restartWanted(r) {
			return
		}
	}
	// NONE, FAILED, or EXITED and to be restarted: the next attempt, once
	// any back-off has passed and the image is there.
	if until := time.Unix(0, r.BackoffUntilUnixNano); r.BackoffUntilUnixNano != 0 && until.After(d.now) {
		fx.wakeAt(until)
		return
	}
	d.requestNextAttempt(fx, r, spec.Image, spec.ImagePullPolicy)
}

// requestNextAttempt moves r's container to its next attempt: its image is
// pulled first if need be, then the BeforeStart hooks are asked, then the
// attempt's intent (ContainerRequested) is journaled.
func (d *decider) requestNextAttempt(fx *effects, r *pb.ContainerRecord, image string, policy corev1.PullPolicy) {
	next := d.nextContainerAttempt(r)
	if r.PulledAttempt != next {
		fx.add(PullImage{Container: r.Name, Attempt: next, Image: image, Policy: policy})
		return
	}
	if !d.hookGate(fx, StageBeforeStart, r.Name, next, time.Time{}) {
		return
	}
	d.emit(&pb.Event{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{
		Name: r.Name, Attempt: next}}})
}

// nextContainerAttempt is above every attempt of that container the journal
// or the runtime has seen, so a new attempt never collides with an old one.
func (d *decider) nextContainerAttempt(r *pb.ContainerRecord) uint32 {
	next := r.Attempt + 1
	for _, c := range d.s.Observed.GetContainers() {
		if c.Name == r.Name && c.Attempt >= next {
			next = c.Attempt + 1
		}
	}
	return next
}

func (d *decider) requestSandbox() {
	d.emit(&pb.Event{Kind: &pb.Event_SandboxRequested{SandboxRequested: &pb.SandboxRequested{Attempt: d.nextSandboxAttempt()}}})
}

// nextSandboxAttempt is above every sandbox attempt the journal or the
// runtime has seen.
func (d *decider) nextSandboxAttempt() uint32 {
	next := d.s.P.SandboxAttempt + 1
	for _, sb := range d.s.Observed.GetSandboxes() {
		if sb.Attempt >= next {
			next = sb.Attempt + 1
		}
	}
	return next
}

// stopLive adds a StopContainer for every container that may still run and
// reports whether there was any. Sidecars are stopped only once nothing
// else runs, as the kubelet stops them after the app containers.
func (d *decider) stopLive(fx *effects, grace time.Duration) bool {
	sidecars := sidecarNames(d.s)
	for _, pass := range []bool{false, true} {
		live := false
		for _, name := range d.recordNames() {
			r := d.s.P.Containers[name]
			if sidecars[name] != pass {
				continue
			}
			if r.Id != "" && (r.Phase == pb.ContainerPhase_CONTAINER_CREATED || r.Phase == pb.ContainerPhase_CONTAINER_RUNNING) {
				live = true
				if !d.stopHooksPass(fx, r) {
					continue
				}
				d.stop(fx, r, grace, StopTerminating)
			}
		}
		if live {
			return true
		}
	}
	return false
}

// retireOldSandboxes stops and removes sandboxes of earlier attempts.
func (d *decider) retireOldSandboxes(fx *effects) {
	for _, sb := range d.s.P.OldSandboxes {
		d.retire(fx, sb)
	}
}

func (d *decider) retire(fx *effects, sb *pb.SandboxRecord) {
	switch sb.Phase {
	case pb.SandboxPhase_SANDBOX_READY, pb.SandboxPhase_SANDBOX_FAILED:
		if sb.Id != "" {
			fx.add(StopSandbox{ID: sb.Id})
		}
	case pb.SandboxPhase_SANDBOX_STOPPED:
		fx.add(RemoveSandbox{ID: sb.Id})
	}
}

// collectDead removes exited containers beyond the ones kept for inspection.
func (d *decider) collectDead(fx *effects) {
	for _, name := range d.recordNames() {
		r := d.s.P.Containers[name]
		if extra := len(r.DeadIds) - d.cfg.KeepDeadContainers; extra > 0 {
			for _, id := range r.DeadIds[:extra] {
				fx.add(RemoveContainer{Name: name, ID: id})
			}
		}
	}
}

// planTermination tears the pod down: containers, then sandboxes, then the
// pod's own records. Pods without a spec (orphans) take the same path.
func (d *decider) planTermination(fx *effects) {
	p := d.s.P
	if !p.Terminating {
		if d.observedObjects() == 0 {
			return // an orphan stream with nothing left in the runtime
		}
		d.terminate("Orphaned", d.cfg.OrphanGrace)
	}
	if p.Terminated {
		d.emit(&pb.Event{Kind: &pb.Event_PodRemoved{PodRemoved: &pb.PodRemoved{}}})
		return
	}
	if cur := p.Sandbox; cur != nil && cur.Phase == pb.SandboxPhase_SANDBOX_REQUESTED {
		// The create may be in flight or done: finish it, then tear it down.
		fx.add(RunSandbox{Attempt: cur.Attempt})
		return
	}
	grace := time.Duration(p.TerminationDeadlineUnixNano - d.now.UnixNano())
	live := d.stopLive(fx, max(grace, 0))
	if d.finishCreates(fx) || live {
		return
	}
	pending := false
	for _, sb := range d.s.Sandboxes() {
		if sb.Id != "" && sb.Phase != pb.SandboxPhase_SANDBOX_REMOVED {
			d.retire(fx, sb)
			pending = true
		}
	}
	if pending || d.strayCount > 0 {
		return
	}
	if !p.Rejected && !d.hookGate(fx, StageTerminated, "", 0, time.Time{}) {
		return
	}
	d.emit(&pb.Event{Kind: &pb.Event_PodTerminated{PodTerminated: &pb.PodTerminated{
		Phase: string(terminalPhase(d.s))}}})
	d.emit(&pb.Event{Kind: &pb.Event_PodRemoved{PodRemoved: &pb.PodRemoved{}}})
}

// finishCreates adds a CreateContainer for every container whose creation
// in the current, ready sandbox was requested and has no result yet, and
// reports whether there was any. That create may be in flight on the
// container's worker while the sandbox is stopped on another: the sandbox
// waits for its result (a container then created is stopped like the
// others), as it waits for a requested sandbox above. A create that never
// left (the process died) is carried out first, which is harmless.
func (d *decider) finishCreates(fx *effects) bool {
	cur := d.s.P.Sandbox
	if cur == nil || cur.Phase != pb.SandboxPhase_SANDBOX_READY {
		return false
	}
	requested := false
	for _, name := range d.recordNames() {
		if r := d.s.P.Containers[name]; r.Phase == pb.ContainerPhase_CONTAINER_REQUESTED {
			var target string
			if ec := d.s.ephemeralSpec(name); ec != nil {
				target, _ = d.ephemeralTarget(ec)
			}
			fx.add(CreateContainer{Name: r.Name, Attempt: r.Attempt, SandboxID: cur.Id, RestartCount: r.RestartCount, Target: target})
			requested = true
		}
	}
	return requested
}

func (d *decider) observedObjects() int {
	return len(d.s.Observed.GetSandboxes()) + len(d.s.Observed.GetContainers())
}

// strays adds effects that stop and remove runtime objects carrying the pod's
// UID that no record explains (leftovers of a lost journal, or of an attempt
// whose intent was superseded), and counts them in d.strayCount.
func (d *decider) strays(fx *effects) {
	d.strayCount = 0
	obs := d.s.Observed
	if obs == nil {
		return
	}
	known := map[string]bool{}
	removed := map[string]bool{}
	for _, sb := range d.s.Sandboxes() {
		if sb.Id != "" {
			known[sb.Id] = true
			if sb.Phase == pb.SandboxPhase_SANDBOX_REMOVED {
				removed[sb.Id] = true
			}
		}
	}
	for _, sb := range obs.GetSandboxes() {
		if known[sb.Id] {
			continue
		}
		if cur := d.s.P.Sandbox; cur != nil && cur.Phase == pb.SandboxPhase_SANDBOX_REQUESTED && cur.Attempt == sb.Attempt {
			continue // about to be adopted
		}
		d.strayCount++
		if sb.Ready {
			fx.add(StopSandbox{ID: sb.Id})
		} else {
			fx.add(RemoveSandbox{ID: sb.Id})
		}
	}
	for _, c := range obs.GetContainers() {
		if !known[c.SandboxId] || removed[c.SandboxId] {
			continue // goes with its sandbox
		}
		r := d.s.P.Containers[c.Name]
		if r != nil && (r.Id == c.Id || slices.Contains(r.DeadIds, c.Id) ||
			(r.Phase == pb.ContainerPhase_CONTAINER_REQUESTED && r.Attempt == c.Attempt)) {
			continue
		}
		d.strayCount++
		if c.State == pb.ObservedState_OBSERVED_RUNNING || c.State == pb.ObservedState_OBSERVED_CREATED {
			fx.add(StopContainer{Name: c.Name, Attempt: c.Attempt, ID: c.Id, Grace: d.cfg.OrphanGrace})
		} else {
			fx.add(RemoveContainer{Name: c.Name, ID: c.Id})
		}
	}
}
