package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestLatencyCanceledHasNoEffect: a call canceled during its simulated
// latency changes nothing, directly and over gRPC.
func TestLatencyCanceledHasNoEffect(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk, Latency: map[string]time.Duration{
		"RunPodSandbox": time.Hour,
		"StopContainer": time.Hour,
	}})
	c := serveUnix(t, rt)

	// Direct call.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := rt.RunPodSandbox(cctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)})
		errc <- err
	}()
	waitFor(t, "RunPodSandbox to wait on the clock", func() bool { return clk.Waiters() == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled RunPodSandbox: %v, want context.Canceled", err)
	}
	clk.Step(2 * time.Hour)
	if in := rt.Info(); in.Sandboxes != 0 || in.PodIPsInUse != 0 {
		t.Fatalf("canceled RunPodSandbox had an effect: %+v", in)
	}

	// Over gRPC: the client's cancellation reaches the server.
	cctx, cancel = context.WithCancel(ctx)
	go func() {
		_, err := c.RunPodSandbox(cctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)})
		errc <- err
	}()
	waitFor(t, "RunPodSandbox to wait on the clock", func() bool { return clk.Waiters() == 1 })
	cancel()
	wantCode(t, <-errc, codes.Canceled, "canceled RunPodSandbox over gRPC")
	waitFor(t, "the server to drop its latency timer", func() bool { return clk.Waiters() == 0 })
	clk.Step(2 * time.Hour)
	if in := rt.Info(); in.Sandboxes != 0 {
		t.Fatalf("canceled gRPC RunPodSandbox had an effect: %+v", in)
	}
	list, err := c.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	noErr(t, err, "ListPodSandbox")
	if len(list.Items) != 0 {
		t.Fatalf("sandboxes after canceled calls: %v", list.Items)
	}

	// A call that waits its latency out does take effect, afterwards.
	go func() {
		_, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)})
		errc <- err
	}()
	waitFor(t, "RunPodSandbox to wait on the clock", func() bool { return clk.Waiters() == 1 })
	if in := rt.Info(); in.Sandboxes != 0 {
		t.Fatalf("RunPodSandbox took effect before its latency: %+v", in)
	}
	clk.Step(time.Hour)
	noErr(t, <-errc, "RunPodSandbox after its latency")
	if in := rt.Info(); in.Sandboxes != 1 {
		t.Fatalf("sandboxes = %d", in.Sandboxes)
	}

	// StopContainer canceled during latency: the container keeps running.
	pull(t, ctx, rt, "busybox")
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	noErr(t, err, "ListPodSandbox")
	id := createContainer(t, ctx, rt, sbs.Items[0].Id, nil, containerConfig("a", "busybox"))
	startContainer(t, ctx, rt, id)
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond) // a real deadline; the latency is on the fake clock
	defer cancel()
	_, err = c.StopContainer(sctx, &runtimeapi.StopContainerRequest{ContainerId: id})
	wantCode(t, err, codes.DeadlineExceeded, "StopContainer past its deadline")
	waitFor(t, "the server to drop its latency timer", func() bool { return clk.Waiters() == 0 })
	clk.Step(2 * time.Hour)
	if st := containerStatus(t, ctx, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("StopContainer that timed out during its latency stopped the container: %v", st)
	}
}

// TestAlreadyCanceledContext: no effect even without latency.
func TestAlreadyCanceledContext(t *testing.T) {
	rt := newRuntime(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunPodSandbox with a canceled context: %v", err)
	}
	if in := rt.Info(); in.Sandboxes != 0 {
		t.Fatalf("info = %+v", in)
	}
}

func TestNegativeLatencyRejected(t *testing.T) {
	if _, err := New(Options{Latency: map[string]time.Duration{"Status": -time.Second}}); err == nil {
		t.Fatal("New accepted a negative latency")
	}
}
