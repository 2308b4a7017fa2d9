package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// setup runs one pod with the image pulled, on a FakeClock.
func setupFake(t *testing.T) (context.Context, *Runtime, *fakeClockT, string, *runtimeapi.PodSandboxConfig) {
	t.Helper()
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	return ctx, rt, clk, runPod(t, ctx, rt, cfg), cfg
}

// waitState waits until the container reaches state.
func waitState(t *testing.T, ctx context.Context, rt *Runtime, id string, state runtimeapi.ContainerState) *runtimeapi.ContainerStatus {
	t.Helper()
	var st *runtimeapi.ContainerStatus
	waitFor(t, "container "+id+" to be "+state.String(), func() bool {
		st = containerStatus(t, ctx, rt, id)
		return st.State == state
	})
	return st
}

func TestExitAfter(t *testing.T) {
	ctx, rt, clk, sb, cfg := setupFake(t)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("job", "busybox", EnvExitAfter, "10s", EnvExitCode, "3"))
	ok := createContainer(t, ctx, rt, sb, cfg, containerConfig("ok", "busybox", EnvExitAfter, "10s"))
	oom := createContainer(t, ctx, rt, sb, cfg, containerConfig("oom", "busybox", EnvExitAfter, "20s", EnvExitCode, "137", EnvExitReason, "OOMKilled"))
	forever := createContainer(t, ctx, rt, sb, cfg, containerConfig("srv", "busybox"))
	for _, c := range []string{id, ok, oom, forever} {
		startContainer(t, ctx, rt, c)
	}
	started := containerStatus(t, ctx, rt, id).StartedAt

	// FakeClock runs due timers inside Step, so a timer that has not fired
	// by the end of Step will not fire later: this check is not racy.
	clk.Step(9 * time.Second)
	if st := containerStatus(t, ctx, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("exited before SIM_EXIT_AFTER: %v", st)
	}
	clk.Step(time.Second)
	st := waitState(t, ctx, rt, id, runtimeapi.ContainerState_CONTAINER_EXITED)
	if st.ExitCode != 3 || st.Reason != "Error" || st.FinishedAt != started+int64(10*time.Second) {
		t.Fatalf("exit = code %d reason %q finished %d (started %d)", st.ExitCode, st.Reason, st.FinishedAt, started)
	}
	st = waitState(t, ctx, rt, ok, runtimeapi.ContainerState_CONTAINER_EXITED)
	if st.ExitCode != 0 || st.Reason != "Completed" {
		t.Fatalf("exit 0 = code %d reason %q", st.ExitCode, st.Reason)
	}
	clk.Step(10 * time.Second)
	st = waitState(t, ctx, rt, oom, runtimeapi.ContainerState_CONTAINER_EXITED)
	if st.ExitCode != 137 || st.Reason != "OOMKilled" {
		t.Fatalf("OOM exit = code %d reason %q", st.ExitCode, st.Reason)
	}
	clk.Step(time.Hour)
	if st := containerStatus(t, ctx, rt, forever); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container without SIM_EXIT_AFTER exited: %v", st)
	}
	if in := rt.Info(); in.Running != 1 {
		t.Fatalf("running = %d", in.Running)
	}
}

func TestExitAfterZeroExitsInStartContainer(t *testing.T) {
	ctx, rt, _, sb, cfg := setupFake(t)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("true", "busybox", EnvExitAfter, "0s", EnvExitCode, "1"))
	startContainer(t, ctx, rt, id)
	st := containerStatus(t, ctx, rt, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 1 || st.FinishedAt != st.StartedAt || st.StartedAt == 0 {
		t.Fatalf("status = %v", st)
	}
}

// TestStopContainerGracePeriod covers SIM_STOP_DELAY within and beyond
// the timeout, and a timeout of 0.
func TestStopContainerGracePeriod(t *testing.T) {
	ctx, rt, clk, sb, cfg := setupFake(t)
	slow := createContainer(t, ctx, rt, sb, cfg, containerConfig("slow", "busybox", EnvStopDelay, "5s", EnvStopExitCode, "143"))
	stuck := createContainer(t, ctx, rt, sb, cfg, containerConfig("stuck", "busybox", EnvStopDelay, "1m"))
	quick := createContainer(t, ctx, rt, sb, cfg, containerConfig("quick", "busybox"))
	for _, c := range []string{slow, stuck, quick} {
		startContainer(t, ctx, rt, c)
	}

	stop := func(id string, timeout int64) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout})
			done <- err
		}()
		return done
	}
	// Graceful exit after the delay, with SIM_STOP_EXIT_CODE.
	before := clk.Waiters()
	slowDone := stop(slow, 30)
	waitFor(t, "StopContainer to arm its timer", func() bool { return clk.Waiters() > before })
	select {
	case err := <-slowDone:
		t.Fatalf("StopContainer returned before the stop delay: %v", err)
	default:
	}
	stopAt := clk.Now().UnixNano()
	clk.Step(5 * time.Second)
	noErr(t, <-slowDone, "StopContainer slow")
	st := containerStatus(t, ctx, rt, slow)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 143 || st.Reason != "Error" || st.FinishedAt != stopAt+int64(5*time.Second) {
		t.Fatalf("slow stop = %v", st)
	}

	// Killed at the timeout when the delay exceeds it.
	before = clk.Waiters()
	stuckDone := stop(stuck, 10)
	waitFor(t, "StopContainer to arm its timer", func() bool { return clk.Waiters() > before })
	stopAt = clk.Now().UnixNano()
	clk.Step(10 * time.Second)
	noErr(t, <-stuckDone, "StopContainer stuck")
	st = containerStatus(t, ctx, rt, stuck)
	if st.ExitCode != 137 || st.Reason != "Error" || st.FinishedAt != stopAt+int64(10*time.Second) {
		t.Fatalf("stuck stop = %v", st)
	}

	// Timeout 0: killed at once.
	noErr(t, <-stop(quick, 0), "StopContainer quick")
	if st := containerStatus(t, ctx, rt, quick); st.ExitCode != 137 || st.Reason != "Error" {
		t.Fatalf("timeout-0 stop = %v", st)
	}
	if n := clk.Waiters(); n != 0 {
		t.Fatalf("%d clock waiters left; timers not stopped", n)
	}
}

// TestStopShortensPendingStop: a second StopContainer with a shorter
// timeout kills earlier; a canceled StopContainer still stops.
func TestStopShortensPendingStop(t *testing.T) {
	ctx, rt, clk, sb, cfg := setupFake(t)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("c", "busybox", EnvStopDelay, "1m"))
	startContainer(t, ctx, rt, id)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := rt.StopContainer(cctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 300})
		done <- err
	}()
	waitFor(t, "StopContainer to arm its timer", func() bool { return clk.Waiters() > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled StopContainer: %v", err)
	}
	if st := containerStatus(t, ctx, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("state right after canceled stop = %v", st.State)
	}
	go func() {
		_, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 2})
		done <- err
	}()
	// The pending graceful exit in 1m is replaced by a kill in 2s.
	waitFor(t, "the shorter kill to be armed", func() bool {
		in := containerStatusVerbose(t, ctx, rt, id)
		return strings.Contains(in, `"pendingExitCode":137`)
	})
	clk.Step(2 * time.Second)
	noErr(t, <-done, "second StopContainer")
	if st := containerStatus(t, ctx, rt, id); st.ExitCode != 137 {
		t.Fatalf("exit = %v", st)
	}
}

func containerStatusVerbose(t *testing.T, ctx context.Context, rt *Runtime, id string) string {
	t.Helper()
	resp, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	noErr(t, err, "ContainerStatus verbose")
	return resp.Info["info"]
}

// TestTimersStoppedOnRemoveAndClose: no clock waiters outlive their
// container, and Close cancels the rest.
func TestTimersStoppedOnRemoveAndClose(t *testing.T) {
	ctx, rt, clk, sb, cfg := setupFake(t)
	a := createContainer(t, ctx, rt, sb, cfg, containerConfig("a", "busybox", EnvExitAfter, "1h"))
	b := createContainer(t, ctx, rt, sb, cfg, containerConfig("b", "busybox", EnvExitAfter, "1h"))
	startContainer(t, ctx, rt, a)
	startContainer(t, ctx, rt, b)
	if n := clk.Waiters(); n != 2 {
		t.Fatalf("waiters = %d, want 2", n)
	}
	_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: a})
	noErr(t, err, "RemoveContainer")
	if n := clk.Waiters(); n != 1 {
		t.Fatalf("waiters after remove = %d, want 1", n)
	}
	noErr(t, rt.Close(), "Close")
	if n := clk.Waiters(); n != 0 {
		t.Fatalf("waiters after Close = %d, want 0", n)
	}
	_, err = rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: b})
	wantCode(t, err, codes.Unavailable, "ContainerStatus after Close")
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("error after Close is not ErrClosed: %v", err)
	}
}

// TestClockWithoutAfterFunc: a clock that lacks AfterFunc still drives
// exits (one goroutine per pending exit).
func TestClockWithoutAfterFunc(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: tickerOnly{clk}})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("c", "busybox", EnvExitAfter, "5s"))
	startContainer(t, ctx, rt, id)
	clk.Step(5 * time.Second)
	waitState(t, ctx, rt, id, runtimeapi.ContainerState_CONTAINER_EXITED)
	if _, ok := rt.clock.(clock.WithDelayedExecution); ok {
		t.Fatal("test clock still offers AfterFunc")
	}
	// A stopped timer's goroutine ends (goleak checks at exit).
	id2 := createContainer(t, ctx, rt, sb, cfg, containerConfig("d", "busybox", EnvExitAfter, "5s"))
	startContainer(t, ctx, rt, id2)
	_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id2})
	noErr(t, err, "RemoveContainer")
}
