package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// subscribe opens GetContainerEvents and waits for the response header,
// after which every change is delivered.
func subscribe(t *testing.T, ctx context.Context, c *client) grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse] {
	t.Helper()
	stream, err := c.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	noErr(t, err, "GetContainerEvents")
	_, err = stream.Header()
	noErr(t, err, "GetContainerEvents header")
	return stream
}

type seenEvent struct {
	id  string
	typ runtimeapi.ContainerEventType
	ev  *runtimeapi.ContainerEventResponse
}

func (e seenEvent) String() string { return fmt.Sprintf("%s %.8s", e.typ, e.id) }

func recvN(t *testing.T, stream grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse], n int) []seenEvent {
	t.Helper()
	var out []seenEvent
	for len(out) < n {
		ev, err := stream.Recv()
		noErr(t, err, fmt.Sprintf("Recv event %d of %d", len(out)+1, n))
		out = append(out, seenEvent{ev.ContainerId, ev.ContainerEventType, ev})
	}
	return out
}

func TestEventsInOrder(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	c := serveUnix(t, rt)
	pull(t, ctx, rt, "busybox")
	streams := []grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse]{subscribe(t, ctx, c), subscribe(t, ctx, c)}

	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("app", "busybox"))
	startContainer(t, ctx, rt, id)
	_, err := c.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 10})
	noErr(t, err, "StopContainer")
	_, err = c.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	noErr(t, err, "RemoveContainer")
	_, err = c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb})
	noErr(t, err, "StopPodSandbox")
	_, err = c.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb})
	noErr(t, err, "RemovePodSandbox")

	want := []seenEvent{
		{sb, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, nil},
		{sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, nil},
		{id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, nil},
		{id, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, nil},
		{id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, nil},
		{id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, nil},
		{sb, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, nil},
		{sb, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, nil},
	}
	for si, stream := range streams {
		got := recvN(t, stream, len(want))
		for i := range want {
			if got[i].id != want[i].id || got[i].typ != want[i].typ {
				t.Fatalf("subscriber %d: events = %v, want %v", si, got, want)
			}
			ev := got[i].ev
			if ev.CreatedAt <= 0 || ev.PodSandboxStatus == nil || ev.PodSandboxStatus.Id != sb || ev.PodSandboxStatus.Metadata.GetUid() != "u" {
				t.Fatalf("event %v lacks the sandbox status: %v", got[i], ev)
			}
		}
		// Statuses as containerd fills them.
		started := got[3].ev
		if len(started.ContainersStatuses) != 1 || started.ContainersStatuses[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("STARTED event container statuses = %v", started.ContainersStatuses)
		}
		stopped := got[4].ev
		if cs := stopped.ContainersStatuses; len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_EXITED || cs[0].Reason != "Completed" {
			t.Errorf("STOPPED event container statuses = %v", cs)
		}
		if len(got[5].ev.ContainersStatuses) != 0 {
			t.Errorf("DELETED event still lists the container: %v", got[5].ev.ContainersStatuses)
		}
		if st := got[7].ev.PodSandboxStatus.State; st != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Errorf("sandbox DELETED event state = %v", st)
		}
	}

	// Close ends the streams with Unavailable.
	noErr(t, rt.Close(), "Close")
	for _, stream := range streams {
		_, err := stream.Recv()
		wantCode(t, err, codes.Unavailable, "Recv after Close")
	}
}

// TestSlowSubscriberDoesNotBlock: a subscriber that never reads does not
// slow runtime calls; the others get everything.
func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	// No deadline of its own: 300 pods with large annotations took 20-30 s
	// under -race on a loaded machine. A runtime blocked behind the stalled
	// subscriber shows as the test binary's timeout, with every stack.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rt := newRuntime(t, Options{})
	c := serveUnix(t, rt)
	pull(t, ctx, rt, "busybox")
	stalledCtx, stopStalled := context.WithCancel(ctx)
	defer stopStalled()
	subscribe(t, stalledCtx, c) // never read
	fast := subscribe(t, ctx, c)

	const pods = 300
	big := strings.Repeat("x", 32<<10) // events large enough to fill gRPC's flow-control windows
	received := make(chan int, 1)
	go func() {
		n := 0
		for n < pods*4 {
			if _, err := fast.Recv(); err != nil {
				break
			}
			n++
		}
		received <- n
	}()

	// The calls run on their own goroutine, which reports on callErr (a
	// goroutine may not fail the test itself once the test may be over).
	callErr := make(chan error, 1)
	go func() {
		callErr <- func() error {
			for i := range pods {
				cfg := podConfig(fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), 0)
				cfg.Annotations["big"] = big
				r, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
				if err != nil {
					return fmt.Errorf("RunPodSandbox: %w", err)
				}
				sb := r.GetPodSandboxId()
				if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
					return fmt.Errorf("StopPodSandbox: %w", err)
				}
				if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
					return fmt.Errorf("RemovePodSandbox: %w", err)
				}
			}
			return nil
		}()
	}()
	if err := <-callErr; err != nil {
		t.Fatal(err)
	}
	if n := <-received; n != pods*4 {
		t.Fatalf("fast subscriber got %d events, want %d", n, pods*4)
	}
	// The stalled stream's sender is blocked by flow control, so events
	// wait in its queue: proof that the test exercised a stall.
	backlog := 0
	rt.events.mu.Lock()
	for s := range rt.events.subs {
		s.mu.Lock()
		backlog = max(backlog, len(s.queue))
		s.mu.Unlock()
	}
	rt.events.mu.Unlock()
	if backlog == 0 {
		t.Fatal("no backlog at the stalled subscriber: the test did not fill the flow-control window")
	}
	t.Logf("stalled subscriber backlog: %d events", backlog)
	stopStalled()
}

// TestEventsDirectSubscriberGone: a stream whose client went away is
// unsubscribed; emitting afterwards costs nothing.
func TestEventsUnsubscribeOnCancel(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	c := serveUnix(t, rt)
	sctx, cancel := context.WithCancel(ctx)
	stream := subscribe(t, sctx, c)
	if !rt.events.active() {
		t.Fatal("no subscriber registered after the header")
	}
	cancel()
	_, err := stream.Recv()
	if status.Code(err) != codes.Canceled {
		t.Fatalf("Recv after cancel: %v", err)
	}
	waitFor(t, "the subscriber to be dropped", func() bool { return !rt.events.active() })
}
