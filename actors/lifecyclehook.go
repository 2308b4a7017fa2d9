package actors

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// LifecycleHook is user code asked at chosen stages of a pod's life whether
// the step may go on: it lets it (lifecycle.Continue), holds it
// (lifecycle.Delay) or refuses it (lifecycle.Veto) with a reason and
// message that show in the pod's status and events. lifecycle.Stage says
// what a Delay and a Veto do at each stage. Install hooks with
// agent.WithLifecycleHook.
//
// Guarantee: at most once per try. Before a hook is called about a step
// (stage, pod, container, attempt), the pod's journal holds the intent
// (HookRequested, with the try's number); the verdict is journaled
// (HookDecided) before the step goes on or is refused. A try is never
// called twice: if actorlet dies (kill -9) or the pod's actor restarts
// between the intent and the verdict, the try is journaled Interrupted and
// the step is asked again as the next try, after a back-off. So a step is
// asked at least once until it has a journaled verdict, each try at most
// once, and HookStep.Try tells a hook with side effects which try it is
// (pod UID, stage, container, attempt and try identify a call).
//
// A hook must honour ctx: it is cancelled after LifecycleHookTimeout, and a
// call that has not returned by then counts as a Delay (HookTimeout). A
// hook that panics counts as a Delay (HookPanicked). A hook runs on the
// pod's own worker, one call at a time per pod; calls for different pods
// run concurrently.
type LifecycleHook interface {
	// Stages are the stages the hook is asked at. They must not change:
	// the node reads them when it starts (the stages at which anything is
	// asked) and at each step (which hooks are asked).
	Stages() []lifecycle.Stage
	// Hook decides about one step. It must not change step.Pod.
	Hook(ctx context.Context, step HookStep) lifecycle.Verdict
}

// HookStep is the step of a pod a LifecycleHook is asked about.
type HookStep struct {
	Stage lifecycle.Stage
	// Pod is the pod as accepted (shared: read only).
	Pod *corev1.Pod
	// Container is the container of BeforeStart, AfterStart and
	// BeforeStop; "" for the pod's stages.
	Container string
	// Attempt is the container's attempt (container stages) or the
	// sandbox's (BeforeSandbox); 0 for Accepted and Terminated.
	Attempt uint32
	// Try numbers the calls about this step: 1, then 2, ... after a Delay,
	// a Veto of BeforeStart, or an interrupted try.
	Try uint32
}

// LifecycleHookTimeout bounds one call of a LifecycleHook.
const LifecycleHookTimeout = 30 * time.Second

// Reasons of the verdicts the node gives for a hook that failed to answer.
const (
	ReasonHookTimeout  = "HookTimeout"
	ReasonHookPanicked = "HookPanicked"
)

// LifecycleHooks asks several hooks, in order: each hook whose Stages
// include the step's stage is asked; the first Veto wins (the later hooks
// are not asked); otherwise the step is held if any hook delays it (for the
// longest delay asked, with the first delaying hook's reason), and goes on
// if all let it.
type LifecycleHooks []LifecycleHook

// Stages returns the stages at which any of the hooks is asked.
func (hs LifecycleHooks) Stages() lifecycle.StageSet {
	var set lifecycle.StageSet
	for _, h := range hs {
		if h != nil {
			set |= lifecycle.StagesOf(h.Stages()...)
		}
	}
	return set
}

// Hook asks the hooks about step (see LifecycleHooks).
func (hs LifecycleHooks) Hook(ctx context.Context, step HookStep) lifecycle.Verdict {
	out := lifecycle.Continue()
	for _, h := range hs {
		if h == nil || !lifecycle.StagesOf(h.Stages()...).Has(step.Stage) {
			continue
		}
		v := callHook(ctx, h, step)
		switch v.Action {
		case lifecycle.ActionVeto:
			return v
		case lifecycle.ActionDelay:
			if out.Action != lifecycle.ActionDelay {
				out = v
			} else {
				out.After = max(out.After, v.After)
			}
		}
	}
	return out
}

// callHook calls h with the timeout; a panic or a call past the timeout is
// a Delay. A call that ignores ctx is left to finish on its own.
func callHook(ctx context.Context, h LifecycleHook, step HookStep) lifecycle.Verdict {
	ctx, cancel := context.WithTimeout(ctx, LifecycleHookTimeout)
	defer cancel()
	done := make(chan lifecycle.Verdict, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- lifecycle.Delay(0, ReasonHookPanicked, fmt.Sprintf("lifecycle hook %T panicked at %s: %v", h, step.Stage, r))
			}
		}()
		done <- h.Hook(ctx, step)
	}()
	select {
	case v := <-done:
		switch v.Action {
		case lifecycle.ActionContinue, lifecycle.ActionDelay, lifecycle.ActionVeto:
			return v
		default:
			return lifecycle.Delay(0, lifecycle.ReasonHookDelayed,
				fmt.Sprintf("lifecycle hook %T answered %q at %s, not Continue, Delay or Veto", h, v.Action, step.Stage))
		}
	case <-ctx.Done():
		return lifecycle.Delay(0, ReasonHookTimeout,
			fmt.Sprintf("lifecycle hook %T did not answer at %s within %s", h, step.Stage, LifecycleHookTimeout))
	}
}

// runLifecycleHook carries out a RunHook effect: the node's hooks are asked
// once, and their verdict goes into res for the core.
func (a *containerActor) runLifecycleHook(ctx context.Context, e lifecycle.RunHook, pod *corev1.Pod, res *pb.EffectResult) {
	v := a.deps.LifecycleHooks.Hook(ctx, HookStep{Stage: e.Stage, Pod: pod, Container: e.Container, Attempt: e.Attempt, Try: e.Try})
	res.HookAction = string(v.Action)
	res.Reason, res.Message = v.Reason, v.Message
	res.HookRetryAfterNanos = int64(v.After)
}
