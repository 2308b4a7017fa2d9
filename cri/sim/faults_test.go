package sim

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/faults"
)

// restartFixture: a pulled image, sandbox "p" with a running container
// that exits on its own after a minute, and a created one; an event
// stream over gRPC.
type restartFixture struct {
	rt               *Runtime
	clk              *fakeClockT
	c                *client
	sb, running, new string
}

func newRestartFixture(t *testing.T) *restartFixture {
	t.Helper()
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	c := serveUnix(t, rt)
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	running := createContainer(t, ctx, rt, sb, cfg, containerConfig("app", "busybox", EnvExitAfter, "1m", EnvExitCode, "3"))
	startContainer(t, ctx, rt, running)
	created := createContainer(t, ctx, rt, sb, cfg, containerConfig("side", "busybox"))
	return &restartFixture{rt: rt, clk: clk, c: c, sb: sb, running: running, new: created}
}

// TestRestartKeep: a containerd restart cuts event streams and changes
// nothing else; a scripted exit still happens.
func TestRestartKeep(t *testing.T) {
	ctx := ctxT(t)
	f := newRestartFixture(t)
	stream := subscribe(t, ctx, f.c)
	f.rt.Restart(faults.RestartKeep)
	_, err := stream.Recv()
	wantCode(t, err, codes.Unavailable, "event stream across a restart")
	in := f.rt.Info()
	if in.Sandboxes != 1 || in.ReadySandboxes != 1 || in.Containers != 2 || in.Running != 1 || in.PodIPsInUse != 1 || in.Restarts != 1 {
		t.Fatalf("after a keep restart: %+v", in)
	}
	f.clk.Step(time.Minute)
	st := waitState(t, ctx, f.rt, f.running, runtimeapi.ContainerState_CONTAINER_EXITED)
	if st.ExitCode != 3 {
		t.Fatalf("scripted exit after a keep restart: code %d", st.ExitCode)
	}
	// A new subscription works.
	stream = subscribe(t, ctx, f.c)
	_, err = f.c.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: f.new})
	noErr(t, err, "RemoveContainer")
	if got := recvN(t, stream, 1); got[0].typ != runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT {
		t.Fatalf("event after re-subscribing: %v", got)
	}
}

// TestRestartReboot: containerd after a reboot: running containers exited
// 255 "Unknown", created ones still created, sandboxes NOTREADY with their
// IPs free; the pod can get a new sandbox without a violation.
func TestRestartReboot(t *testing.T) {
	ctx := ctxT(t)
	f := newRestartFixture(t)
	stream := subscribe(t, ctx, f.c)
	f.rt.Restart(faults.RestartReboot)
	_, err := stream.Recv()
	wantCode(t, err, codes.Unavailable, "event stream across a reboot")

	st := containerStatus(t, ctx, f.rt, f.running)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 255 || st.Reason != "Unknown" || st.FinishedAt != f.clk.Now().UnixNano() {
		t.Fatalf("running container after a reboot: %v", st)
	}
	if st := containerStatus(t, ctx, f.rt, f.new); st.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Fatalf("created container after a reboot: %v", st.State)
	}
	if st := sandboxStatus(t, ctx, f.rt, f.sb); st.Status.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Fatalf("sandbox after a reboot: %v", st.Status.State)
	}
	in := f.rt.Info()
	if in.Sandboxes != 1 || in.ReadySandboxes != 0 || in.Containers != 2 || in.Running != 0 || in.PodIPsInUse != 0 || in.Images != 1 {
		t.Fatalf("after a reboot: %+v", in)
	}
	f.clk.Step(time.Hour) // the cancelled scripted exit does not fire
	if st := containerStatus(t, ctx, f.rt, f.running); st.ExitCode != 255 {
		t.Fatalf("scripted exit fired after a reboot: %v", st)
	}
	// The client cannot know of the reboot before it lists: creating in
	// the dead sandbox fails, but is no misuse.
	_, err = f.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: f.sb, SandboxConfig: podConfig("p", "u", 0), Config: containerConfig("late", "busybox")})
	wantCode(t, err, codes.FailedPrecondition, "CreateContainer in a rebooted sandbox")
	_, err = f.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: f.new})
	wantCode(t, err, codes.FailedPrecondition, "StartContainer in a rebooted sandbox")
	runPod(t, ctx, f.rt, podConfig("p", "u", 1))
	if in := f.rt.Info(); in.ViolationCount != 0 {
		t.Fatalf("violations: %v", in.Violations)
	}
}

// TestRestartWipe: nothing survives but images; names and IPs are free.
func TestRestartWipe(t *testing.T) {
	ctx := ctxT(t)
	f := newRestartFixture(t)
	// A violation before the restart is kept.
	_, err := f.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: f.running})
	wantCode(t, err, codes.FailedPrecondition, "second StartContainer")

	f.rt.Restart(faults.RestartWipe)
	in := f.rt.Info()
	if in.Sandboxes != 0 || in.Containers != 0 || in.Running != 0 || in.PodIPsInUse != 0 || in.Images != 1 || in.ViolationCount != 1 {
		t.Fatalf("after a wipe: %+v", in)
	}
	_, err = f.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: f.running})
	wantCode(t, err, codes.NotFound, "ContainerStatus of a wiped container")
	cfg := podConfig("p", "u", 0) // the same name as before
	sb := runPod(t, ctx, f.rt, cfg)
	startContainer(t, ctx, f.rt, createContainer(t, ctx, f.rt, sb, cfg, containerConfig("app", "busybox")))
	if in := f.rt.Info(); in.ViolationCount != 1 || in.Running != 1 {
		t.Fatalf("after re-creating: %+v", in)
	}
	f.clk.Step(time.Hour) // the wiped container's scripted exit does not fire
	if in := f.rt.Info(); in.Running != 1 {
		t.Fatalf("a wiped container's exit fired: %+v", in)
	}
}

func faultyRuntime(t *testing.T, yaml string) (*Runtime, *client) {
	t.Helper()
	p, err := faults.Parse([]byte(yaml))
	noErr(t, err, "faults.Parse")
	rt := newRuntime(t, Options{Faults: p, FaultSeed: 1})
	return rt, serveUnix(t, rt)
}

// TestFaultsOnServedCalls: the plan applies to calls over gRPC, not to
// direct calls; the runtime counts what was injected.
func TestFaultsOnServedCalls(t *testing.T) {
	ctx := ctxT(t)
	rt, c := faultyRuntime(t, `rpcs: {RunPodSandbox: {error: 1, codes: [ResourceExhausted]}}`)
	_, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)})
	wantCode(t, err, codes.ResourceExhausted, "RunPodSandbox over gRPC")
	if in := rt.Info(); in.Sandboxes != 0 {
		t.Fatalf("a failed-before call had an effect: %+v", in)
	}
	runPod(t, ctx, rt, podConfig("p", "u", 0))
	in := simInfo(t, ctx, clientStatus(c))
	if in.Sandboxes != 1 || in.Faults[faults.KindError] != 1 {
		t.Fatalf("info: %+v", in)
	}
}

// TestPlannedWipeOverGRPC: a restart the plan triggers on a call acts on
// the runtime before the call is served.
func TestPlannedWipeOverGRPC(t *testing.T) {
	ctx := ctxT(t)
	rt, c := faultyRuntime(t, `restart: {rate: 1, mode: wipe}`)
	runPod(t, ctx, rt, podConfig("p", "u", 0))
	list, err := c.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	noErr(t, err, "ListPodSandbox")
	if len(list.Items) != 0 || rt.Info().Restarts != 1 {
		t.Fatalf("after a planned wipe: %d sandboxes, %+v", len(list.Items), rt.Info())
	}
	if got := rt.Faults().Totals()[faults.KindRestart]; got != 1 {
		t.Fatalf("restarts counted: %d", got)
	}
}

// TestEventFaultsOnSimEvents: every event of the runtime's own stream is
// duplicated.
func TestEventFaultsOnSimEvents(t *testing.T) {
	ctx := ctxT(t)
	rt, c := faultyRuntime(t, `events: {duplicate: 1}`)
	stream := subscribe(t, ctx, c)
	sb := runPod(t, ctx, rt, podConfig("p", "u", 0))
	var got []string
	for _, e := range recvN(t, stream, 4) {
		if e.id != sb {
			t.Fatalf("event of %s, want %s", e.id, sb)
		}
		got = append(got, strings.TrimPrefix(e.typ.String(), "CONTAINER_"))
	}
	if want := "CREATED_EVENT CREATED_EVENT STARTED_EVENT STARTED_EVENT"; strings.Join(got, " ") != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}

// TestViolationsSeeARetryAfterALostReply: a StartContainer whose reply a
// fault replaced took effect; starting it again is misuse, and recorded.
func TestViolationsSeeARetryAfterALostReply(t *testing.T) {
	ctx := ctxT(t)
	rt, c := faultyRuntime(t, `rpcs: {StartContainer: {errorAfter: 1, codes: [DeadlineExceeded]}}`)
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	id := createContainer(t, ctx, rt, runPod(t, ctx, rt, cfg), cfg, containerConfig("app", "busybox"))
	_, err := c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	wantCode(t, err, codes.DeadlineExceeded, "StartContainer")
	if st := containerStatus(t, ctx, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("state after a lost reply: %v", st.State)
	}
	_, _ = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	if in := rt.Info(); in.ViolationCount != 1 || !strings.Contains(in.Violations[0], "StartContainer") {
		t.Fatalf("violations %v", in.Violations)
	}
}

func TestNewRejectsABadPlan(t *testing.T) {
	_, err := New(Options{Faults: &faults.Plan{Events: faults.EventFaults{Drop: 2}}})
	if err == nil || !strings.Contains(err.Error(), "events: drop") {
		t.Fatalf("New with a bad plan: %v", err)
	}
}
