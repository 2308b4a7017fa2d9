package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/agent"
)

// stepHook is a LifecycleHook that answers with decide and records every
// call (stage/container/attempt/try of pod).
type stepHook struct {
	stages []lifecycle.Stage
	decide func(ctx context.Context, s actors.HookStep) lifecycle.Verdict
	mu     sync.Mutex
	calls  map[string]int
}

func (h *stepHook) Stages() []lifecycle.Stage { return h.stages }

func (h *stepHook) Hook(ctx context.Context, s actors.HookStep) lifecycle.Verdict {
	h.mu.Lock()
	if h.calls == nil {
		h.calls = map[string]int{}
	}
	h.calls[callKey(s.Pod.Name, s.Stage, s.Container, s.Attempt, s.Try)]++
	h.mu.Unlock()
	return h.decide(ctx, s)
}

func callKey(pod string, st lifecycle.Stage, container string, attempt, try uint32) string {
	return fmt.Sprintf("%s %s/%s/%d/%d", pod, st, container, attempt, try)
}

func (h *stepHook) count(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[key]
}

func (h *stepHook) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.calls {
		out[k] = v
	}
	return out
}

func waitingReason(p *corev1.Pod) string {
	if p == nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
		return ""
	}
	return p.Status.ContainerStatuses[0].State.Waiting.Reason
}

// A hook vetoes a pod when it is accepted: the pod is Failed with the
// hook's reason and message and never gets a sandbox; a hook that delays
// another pod's sandbox holds it Pending with its reason until it lets it
// go; the third pod runs.
func TestLifecycleHookVetoAndDelay(t *testing.T) {
	e := newEnv(t)
	veto, slow, good := pod("veto", corev1.RestartPolicyAlways), pod("slow", corev1.RestartPolicyAlways), pod("good", corev1.RestartPolicyAlways)
	release := make(chan struct{})
	vetoer := &stepHook{stages: []lifecycle.Stage{lifecycle.StageAccepted}, decide: func(_ context.Context, s actors.HookStep) lifecycle.Verdict {
		if s.Pod.Name == "veto" {
			return lifecycle.Veto("NotOnThisNode", "pods named veto do not run here")
		}
		return lifecycle.Continue()
	}}
	delayer := &stepHook{stages: []lifecycle.Stage{lifecycle.StageBeforeSandbox}, decide: func(_ context.Context, s actors.HookStep) lifecycle.Verdict {
		select {
		case <-release:
			return lifecycle.Continue()
		default:
		}
		if s.Pod.Name == "slow" {
			return lifecycle.Delay(20*time.Millisecond, "WaitingForGPU", "no GPU free")
		}
		return lifecycle.Continue()
	}}
	a := e.startExt([]agent.Option{agent.WithLifecycleHook(vetoer), agent.WithLifecycleHook(delayer)}, veto, slow, good)
	defer a.Stop(context.Background())
	waitFor(t, "good Running, veto Failed, slow Pending waiting for its GPU", func() (bool, string) {
		g, _ := phaseOf(a, "uid-good")
		v, _ := phaseOf(a, "uid-veto")
		s, sp := phaseOf(a, "uid-slow")
		return g == corev1.PodRunning && v == corev1.PodFailed && s == corev1.PodPending && waitingReason(sp) == "WaitingForGPU" &&
				delayer.count(callKey("slow", lifecycle.StageBeforeSandbox, "", 1, 3)) == 1,
			fmt.Sprintf("good %s veto %s slow %s (%q)", g, v, s, waitingReason(sp))
	})
	_, p := phaseOf(a, "uid-veto")
	if p.Status.Reason != "NotOnThisNode" || p.Status.Message != "pods named veto do not run here" {
		t.Fatalf("veto's status: reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if v, err := e.client.ListPod(context.Background(), "uid-veto"); err != nil || !v.Empty() {
		t.Fatalf("the vetoed pod has runtime objects: %v %v", v, err)
	}
	if n := delayer.count(callKey("veto", lifecycle.StageBeforeSandbox, "", 1, 1)); n != 0 {
		t.Fatalf("a hook was asked about the vetoed pod's sandbox %d times", n)
	}
	close(release)
	waitFor(t, "slow Running once its hook lets it", func() (bool, string) {
		s, _ := phaseOf(a, "uid-slow")
		return s == corev1.PodRunning, string(s)
	})
	for k, n := range delayer.snapshot() {
		if n != 1 {
			t.Errorf("hook call %s made %d times", k, n)
		}
	}
	e.checkViolations()
}

// A node stopped while a hook runs (its verdict never journaled) does not
// call that try again: the next node journals it Interrupted and asks the
// step again as try 2, and the container starts once that try lets it.
func TestLifecycleHookInterruptedTryIsNotRepeated(t *testing.T) {
	e := newEnv(t)
	p := pod("web", corev1.RestartPolicyAlways)
	block := make(chan struct{})
	defer close(block)
	first := &stepHook{stages: []lifecycle.Stage{lifecycle.StageBeforeStart}, decide: func(_ context.Context, s actors.HookStep) lifecycle.Verdict {
		<-block // never answers while the node runs
		return lifecycle.Continue()
	}}
	a := e.startExt([]agent.Option{agent.WithLifecycleHook(first)}, p)
	try1 := callKey("web", lifecycle.StageBeforeStart, "app", 1, 1)
	waitFor(t, "the hook asked about the container's start", func() (bool, string) {
		return first.count(try1) == 1, fmt.Sprint(first.snapshot())
	})
	// The hook's call still runs: the supervisor cannot stop in time, and
	// the node goes down around it, as when killed.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_ = a.Stop(ctx)
	cancel()

	second := &stepHook{stages: []lifecycle.Stage{lifecycle.StageBeforeStart}, decide: func(context.Context, actors.HookStep) lifecycle.Verdict {
		return lifecycle.Continue()
	}}
	b := e.startExt([]agent.Option{agent.WithLifecycleHook(second)}, p)
	defer b.Stop(context.Background())
	waitFor(t, "web Running after try 2", func() (bool, string) {
		ph, st := phaseOf(b, "uid-web")
		return ph == corev1.PodRunning, fmt.Sprintf("%s (%q)", ph, waitingReason(st))
	})
	calls := second.snapshot()
	if calls[try1] != 0 || calls[callKey("web", lifecycle.StageBeforeStart, "app", 1, 2)] != 1 || len(calls) != 1 {
		t.Fatalf("the restarted node's hook calls: %v (want only try 2, once)", calls)
	}
	e.checkViolations()
}

// A BeforeStop hook holds a removed pod's container while it delays (the
// container keeps running), and the Terminated hook is asked once after
// everything is gone; then the pod is removed.
func TestLifecycleHookHoldsTheStop(t *testing.T) {
	e := newEnv(t)
	p := pod("web", corev1.RestartPolicyAlways)
	p.Spec.TerminationGracePeriodSeconds = ptr(int64(600))
	var mu sync.Mutex
	draining := true
	hook := &stepHook{stages: []lifecycle.Stage{lifecycle.StageBeforeStop, lifecycle.StageTerminated}, decide: func(_ context.Context, s actors.HookStep) lifecycle.Verdict {
		mu.Lock()
		defer mu.Unlock()
		if s.Stage == lifecycle.StageBeforeStop && draining {
			return lifecycle.Delay(20*time.Millisecond, "Draining", "connections open")
		}
		return lifecycle.Continue()
	}}
	a := e.startExt([]agent.Option{agent.WithLifecycleHook(hook)}, p)
	defer a.Stop(context.Background())
	waitFor(t, "web Running", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning, string(ph)
	})
	a.SetPods("test", nil)
	waitFor(t, "the stop held for 3 tries", func() (bool, string) {
		return hook.count(callKey("web", lifecycle.StageBeforeStop, "app", 1, 3)) == 1, fmt.Sprint(hook.snapshot())
	})
	if v, err := e.client.ListPod(context.Background(), "uid-web"); err != nil || len(v.Containers) != 1 || v.Containers[0].State != cri.ContainerRunning {
		t.Fatalf("the held container does not run: %+v %v", v, err)
	}
	mu.Lock()
	draining = false
	mu.Unlock()
	waitFor(t, "web removed", func() (bool, string) {
		_, ok := a.Statuses().Get("uid-web")
		return !ok, ""
	})
	if n := hook.count(callKey("web", lifecycle.StageTerminated, "", 0, 1)); n != 1 {
		t.Fatalf("Terminated asked %d times: %v", n, hook.snapshot())
	}
	e.checkViolations()
}

func ptr[T any](v T) *T { return &v }
