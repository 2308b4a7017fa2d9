package lifecycle

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Stage is a step of a pod's life at which the node's lifecycle hooks (user
// code; actors.LifecycleHook) are asked whether the step may go on.
//
// What a hook's verdict does at each stage (the kubelet's nearest
// behaviour in brackets):
//
//   - Accepted: asked once the pod is accepted, before anything runs.
//     Delay: the pod waits, Pending, its containers Waiting with the reason.
//     Veto: the pod is rejected, Failed with the reason and message, and
//     never gets a sandbox [an admission rejection].
//   - BeforeSandbox: asked before each sandbox attempt. Delay: as Accepted.
//     Veto: attempt 1 as Accepted; a later one fails the pod (Failed with
//     the reason) and stops what is left of it [DeadlineExceeded].
//   - BeforeStart: asked before each container attempt is created (its
//     image present). Delay: the container waits with the reason. Veto: the
//     same, asked again after the crash-loop back-off [CreateContainerError].
//   - AfterStart: asked once a container attempt started. Delay: asked
//     again later; the container runs meanwhile. Veto: the container is
//     killed with the reason and restarted by the pod's policy
//     [FailedPostStartHook].
//   - BeforeStop: asked before a running container of a terminating pod is
//     stopped. Delay: the stop waits, at most until the pod's grace period
//     ends (the wait uses it up). Veto: recorded (an event); the stop goes
//     on [FailedPreStopHook].
//   - Terminated: asked once the pod's containers and sandbox are gone,
//     before PodTerminated. Delay: the pod's records wait. Veto: recorded;
//     the pod is removed.
//
// Every step is identified by its stage, container ("" for the pod's stages)
// and attempt; see RunHook and actors.LifecycleHook for the journaled
// protocol and its guarantee.
type Stage uint8

const (
	StageAccepted Stage = iota + 1
	StageBeforeSandbox
	StageBeforeStart
	StageAfterStart
	StageBeforeStop
	StageTerminated
)

var stageNames = [...]string{"", "Accepted", "BeforeSandbox", "BeforeStart", "AfterStart", "BeforeStop", "Terminated"}

// Stages lists every stage, in the order of a pod's life.
func Stages() []Stage {
	return []Stage{StageAccepted, StageBeforeSandbox, StageBeforeStart, StageAfterStart, StageBeforeStop, StageTerminated}
}

func (s Stage) String() string {
	if int(s) < len(stageNames) && s != 0 {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// ParseStage returns the stage named s (as String prints it).
func ParseStage(s string) (Stage, error) {
	for i, n := range stageNames {
		if n != "" && n == s {
			return Stage(i), nil
		}
	}
	return 0, fmt.Errorf("unknown lifecycle hook stage %q (want one of %s)", s, strings.Join(stageNames[1:], ", "))
}

// StageSet is a set of stages (Config.HookStages).
type StageSet uint8

// StagesOf returns the set of the given stages.
func StagesOf(stages ...Stage) StageSet {
	var s StageSet
	for _, st := range stages {
		s |= 1 << st
	}
	return s
}

// Has reports whether st is in the set.
func (s StageSet) Has(st Stage) bool { return s&(1<<st) != 0 }

// Action is what a verdict asks for.
type Action string

const (
	// ActionContinue lets the step go on.
	ActionContinue Action = "Continue"
	// ActionDelay holds the step; it is asked again later (a new try).
	ActionDelay Action = "Delay"
	// ActionVeto refuses the step (see Stage for what that does).
	ActionVeto Action = "Veto"
	// ActionInterrupted is journaled by the core, never returned by a hook:
	// the node restarted while the hooks ran, so their verdict is unknown.
	// The step is held and asked again (a new try), as after a Delay.
	ActionInterrupted Action = "Interrupted"
)

// Verdict is a lifecycle hook's answer about one step.
type Verdict struct {
	Action Action
	// Reason (a CamelCase word, as the kubelet's reasons) and Message show in
	// the pod's status and events. A Delay or Veto without a reason gets
	// ReasonHookDelayed or ReasonHookVetoed.
	Reason, Message string
	// After is how long a Delay waits; 0 is the core's back-off
	// (Config.BackoffInitial doubling per hold of the step, at most
	// Config.BackoffMax).
	After time.Duration
}

// Continue lets the step go on.
func Continue() Verdict { return Verdict{Action: ActionContinue} }

// Delay holds the step for after (0: the core's back-off), then asks again.
func Delay(after time.Duration, reason, message string) Verdict {
	return Verdict{Action: ActionDelay, After: after, Reason: reason, Message: message}
}

// Veto refuses the step with reason and message.
func Veto(reason, message string) Verdict {
	return Verdict{Action: ActionVeto, Reason: reason, Message: message}
}

// Default reasons of verdicts that give none, and of an interrupted try.
const (
	ReasonHookDelayed     = "HookDelayed"
	ReasonHookVetoed      = "HookVetoed"
	ReasonHookInterrupted = "HookInterrupted"
)

// RunHook asks the caller to call the node's lifecycle hooks about one step
// of the pod, once, and to report their verdict as an EffectResult with
// this key (HookAction, HookRetryAfterNanos, Reason, Message). Its
// HookRequested is durable before the effect is handed out.
type RunHook struct {
	Stage     Stage
	Container string
	Attempt   uint32
	Try       uint32
}

func (e RunHook) Key() string {
	return fmt.Sprintf("hook/%s/%s/%d/%d", e.Stage, e.Container, e.Attempt, e.Try)
}

func (e RunHook) String() string {
	s := fmt.Sprintf("RunHook %s", e.Stage)
	if e.Container != "" {
		s += " " + e.Container
	}
	return s + fmt.Sprintf(" attempt=%d try=%d", e.Attempt, e.Try)
}

func hookStepKey(st string, container string, attempt uint32) string {
	return fmt.Sprintf("%s/%s/%d", st, container, attempt)
}

// hookCalls holds the RunHook keys whose HookRequested this process
// journaled (State.asked): only those may be called. A try journaled by an
// earlier process (found on replay) was interrupted, or its verdict lost.
type hookCalls map[string]bool

// hookGate asks the hooks about a step and reports whether it may go on
// now. Without hooks for the stage (or a pod spec) it always may. With a
// deadline (BeforeStop), the step goes on at the deadline whatever the
// hooks say. Otherwise: the first try is requested; a try requested here is
// handed out (RunHook) until decided; a try of an earlier process is
// decided Interrupted; a decided hold (Delay, Interrupted, a BeforeStart
// Veto) waits until its retry time, then the next try is requested. A Veto
// of another stage is final for the step: it goes on for BeforeStop,
// AfterStart and Terminated (Apply folded what the veto does), and does not
// for Accepted and BeforeSandbox (the pod failed).
func (d *decider) hookGate(fx *effects, st Stage, container string, attempt uint32, deadline time.Time) bool {
	if !d.cfg.HookStages.Has(st) || d.s.Pod == nil {
		return true
	}
	if !deadline.IsZero() && !d.now.Before(deadline) {
		return true
	}
	key := hookStepKey(st.String(), container, attempt)
	rec := d.s.P.StageHooks[key]
	if rec == nil {
		d.requestHook(fx, st, container, attempt, 1)
		return false
	}
	if !rec.Decided {
		run := RunHook{Stage: st, Container: container, Attempt: attempt, Try: rec.Try}
		if d.s.asked[run.Key()] {
			fx.add(run)
			return false
		}
		d.emit(&pb.Event{Kind: &pb.Event_HookDecided{HookDecided: &pb.HookDecided{
			Stage: rec.Stage, Container: container, Attempt: attempt, Try: rec.Try,
			Action: string(ActionInterrupted), Reason: ReasonHookInterrupted,
			Message:         fmt.Sprintf("the node restarted while the lifecycle hooks ran (try %d); they are asked again", rec.Try),
			RetryAtUnixNano: d.now.Add(d.hookBackoff(rec.Holds)).UnixNano()}}})
		rec = d.s.P.StageHooks[key]
	}
	switch Action(rec.Action) {
	case ActionContinue:
		return true
	case ActionVeto:
		switch st {
		case StageBeforeStart:
		case StageAccepted, StageBeforeSandbox:
			return false
		default:
			return true
		}
	}
	retry := time.Unix(0, rec.RetryAtUnixNano)
	if !deadline.IsZero() && retry.After(deadline) {
		retry = deadline
	}
	if d.now.Before(retry) {
		fx.wakeAt(retry)
		return false
	}
	d.requestHook(fx, st, container, attempt, rec.Try+1)
	return false
}

func (d *decider) requestHook(fx *effects, st Stage, container string, attempt, try uint32) {
	d.emit(&pb.Event{Kind: &pb.Event_HookRequested{HookRequested: &pb.HookRequested{
		Stage: st.String(), Container: container, Attempt: attempt, Try: try}}})
	run := RunHook{Stage: st, Container: container, Attempt: attempt, Try: try}
	asked := maps.Clone(d.s.asked) // the input state's set stays as it was
	if asked == nil {
		asked = hookCalls{}
	}
	asked[run.Key()] = true
	d.s.asked = asked
	fx.add(run)
}

// hookBackoff is the wait after holds earlier holds of a step.
func (d *decider) hookBackoff(holds uint32) time.Duration {
	return min(d.cfg.BackoffInitial<<min(holds, 16), d.cfg.BackoffMax)
}

// hookResult journals the verdict of a try handed out as RunHook (key
// "<stage>/<container>/<attempt>/<try>"); a verdict for a try that is not
// the step's latest undecided one, or for a removed pod, is stale and
// ignored.
func (d *decider) hookResult(rest string, res *pb.EffectResult) {
	parts := strings.Split(rest, "/")
	if len(parts) != 4 {
		return
	}
	st, err := ParseStage(parts[0])
	if err != nil {
		return
	}
	attempt, err1 := strconv.ParseUint(parts[2], 10, 32)
	try, err2 := strconv.ParseUint(parts[3], 10, 32)
	if err1 != nil || err2 != nil {
		return
	}
	rec := d.s.P.StageHooks[hookStepKey(parts[0], parts[1], uint32(attempt))]
	if rec == nil || rec.Decided || rec.Try != uint32(try) || d.s.P.Removed {
		return
	}
	ev := &pb.HookDecided{Stage: rec.Stage, Container: rec.Container, Attempt: rec.Attempt, Try: rec.Try,
		Reason: res.Reason, Message: res.Message}
	switch Action(res.HookAction) {
	case ActionContinue:
		ev.Action = string(ActionContinue)
		ev.Reason, ev.Message = "", ""
	case ActionDelay:
		ev.Action = string(ActionDelay)
		ev.Reason = orDefault(ev.Reason, ReasonHookDelayed)
		wait := time.Duration(res.HookRetryAfterNanos)
		if wait <= 0 {
			wait = d.hookBackoff(rec.Holds)
		}
		ev.RetryAtUnixNano = d.now.Add(wait).UnixNano()
	case ActionVeto:
		ev.Action = string(ActionVeto)
		ev.Reason = orDefault(ev.Reason, ReasonHookVetoed)
		if st == StageBeforeStart {
			ev.RetryAtUnixNano = d.now.Add(max(d.hookBackoff(rec.Holds), d.cfg.BackoffInitial)).UnixNano()
		}
	default:
		return
	}
	d.emit(&pb.Event{Kind: &pb.Event_HookDecided{HookDecided: ev}})
}

// applyHookRequested folds HookRequested: the step's try, not decided yet.
func applyHookRequested(s *State, ev *pb.HookRequested) {
	if s.P.StageHooks == nil {
		s.P.StageHooks = map[string]*pb.StageHookRecord{}
	}
	key := hookStepKey(ev.Stage, ev.Container, ev.Attempt)
	rec := s.P.StageHooks[key]
	if rec == nil {
		rec = &pb.StageHookRecord{Stage: ev.Stage, Container: ev.Container, Attempt: ev.Attempt}
		s.P.StageHooks[key] = rec
	}
	rec.Try = ev.Try
	rec.Decided = false
}

// applyHookDecided folds HookDecided into the step's record and does what
// the verdict does at its stage (see Stage).
func applyHookDecided(s *State, ev *pb.HookDecided, at int64) {
	rec := s.P.StageHooks[hookStepKey(ev.Stage, ev.Container, ev.Attempt)]
	if rec == nil || rec.Try != ev.Try || rec.Decided {
		return
	}
	rec.Decided = true
	rec.Action, rec.Reason, rec.Message, rec.RetryAtUnixNano = ev.Action, ev.Reason, ev.Message, ev.RetryAtUnixNano
	action := Action(ev.Action)
	if action != ActionContinue {
		rec.Holds++
	}
	st, err := ParseStage(ev.Stage)
	if err != nil {
		return
	}
	if p := s.P; (p.Terminating || p.Rejected || p.DeadlineExceeded || p.Removed) && st != StageBeforeStop && st != StageTerminated {
		return // a verdict that arrives once the pod is going or failed only is recorded
	}
	switch st {
	case StageAccepted, StageBeforeSandbox:
		switch {
		case action == ActionVeto && s.P.SandboxAttempt == 0:
			s.P.Rejected = true
			s.P.Reason, s.P.Message = ev.Reason, ev.Message
		case action == ActionVeto:
			// Earlier sandboxes ran: the node fails the pod, as past its
			// active deadline; what is left of it is stopped.
			s.P.DeadlineExceeded = true
			s.P.KillDeadlineUnixNano = at
			s.P.FailReason, s.P.FailMessage = ev.Reason, ev.Message
		default:
			holdWaiting(s, action, ev.Reason, ev.Message)
		}
	case StageBeforeStart:
		r := s.P.Containers[ev.Container]
		if r == nil {
			r = s.container(ev.Container)
		}
		if action == ActionContinue || r.Attempt >= ev.Attempt {
			return
		}
		if r.Phase == pb.ContainerPhase_CONTAINER_EXITED {
			r.RestartCount++ // the restart is under way; ContainerRequested will not count it again
		}
		if r.Id != "" {
			r.DeadIds = appendNew(r.DeadIds, r.Id)
			r.Id = ""
		}
		r.Phase = pb.ContainerPhase_CONTAINER_FAILED
		r.Ready = false
		r.WaitingReason, r.WaitingMessage = ev.Reason, ev.Message
		r.BackoffUntilUnixNano = ev.RetryAtUnixNano
	case StageAfterStart:
		r := s.P.Containers[ev.Container]
		if action != ActionVeto || r == nil || r.Attempt != ev.Attempt || r.KillReason != "" ||
			(r.Phase != pb.ContainerPhase_CONTAINER_RUNNING && r.Phase != pb.ContainerPhase_CONTAINER_CREATED) {
			return
		}
		r.KillReason, r.KillMessage = ev.Reason, ev.Message
		r.Ready = false
	}
}

// holdWaiting shows a pod-stage hold in the waiting reason of the
// containers that have not been asked for yet; Continue clears it.
func holdWaiting(s *State, action Action, reason, msg string) {
	if s.Pod == nil {
		return
	}
	var names []string
	for _, c := range s.Pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range s.Pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, name := range names {
		r := s.P.Containers[name]
		switch {
		case action == ActionContinue:
			if r != nil && r.Phase == pb.ContainerPhase_CONTAINER_NONE {
				r.WaitingReason, r.WaitingMessage = "", ""
			}
		case r == nil || r.Phase == pb.ContainerPhase_CONTAINER_NONE:
			r = s.container(name)
			r.WaitingReason, r.WaitingMessage = reason, msg
		}
	}
}

func appendNew(ids []string, id string) []string {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}

// sandboxHooksPass reports whether the next sandbox may be requested: the
// Accepted hooks (before the pod's first sandbox) and the BeforeSandbox
// hooks of that attempt let it.
func (d *decider) sandboxHooksPass(fx *effects) bool {
	if d.s.P.SandboxAttempt == 0 && !d.hookGate(fx, StageAccepted, "", 0, time.Time{}) {
		return false
	}
	return d.hookGate(fx, StageBeforeSandbox, "", d.nextSandboxAttempt(), time.Time{})
}

// stopHooksPass reports whether the running container r of a terminating
// pod may be stopped: the BeforeStop hooks let it, or the pod's grace
// period is over. Other stops (a failed probe, a lost sandbox, a pod past
// its deadline) do not ask.
func (d *decider) stopHooksPass(fx *effects, r *pb.ContainerRecord) bool {
	p := d.s.P
	if !p.Terminating || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
		return true
	}
	return d.hookGate(fx, StageBeforeStop, r.Name, r.Attempt, time.Unix(0, p.TerminationDeadlineUnixNano))
}
