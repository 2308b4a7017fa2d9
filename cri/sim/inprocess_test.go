package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// heapAfterGC is the live heap, in bytes.
func heapAfterGC() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// inProcessCycle serves a new runtime in process, makes calls (one of
// them an event stream left open), then stops and closes it all. It
// returns the client connection, which the caller may keep.
func inProcessCycle(t *testing.T, ctx context.Context) *grpc.ClientConn {
	t.Helper()
	rt, err := New(Options{Logger: zap.NewNop()})
	noErr(t, err, "New")
	conn, stop, err := InProcess(ctx, rt)
	noErr(t, err, "InProcess")
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := rc.GetContainerEvents(sctx, &runtimeapi.GetEventsRequest{})
	noErr(t, err, "GetContainerEvents")
	_, err = events.Header() // subscribed
	noErr(t, err, "GetContainerEvents header")
	_, err = rc.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)})
	noErr(t, err, "RunPodSandbox")
	_, err = events.Recv()
	noErr(t, err, "receive an event")
	_, err = rc.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	noErr(t, err, "ListPodSandbox")
	stop()
	noErr(t, rt.Close(), "Close")
	return conn
}

// TestInProcessReleasesMemory checks that InProcess keeps nothing alive
// after stop and Runtime.Close: across 10 cycles the heap grows by less
// than the buffers of one connection (before, each cycle's 2 MiB of
// bufconn buffers stayed reachable for 10 s, held by deadline timers),
// even though the test keeps every *grpc.ClientConn.
func TestInProcessReleasesMemory(t *testing.T) {
	ctx := ctxT(t)
	inProcessCycle(t, ctx) // gRPC's one-time allocations are not ours
	base := heapAfterGC()
	var kept []*grpc.ClientConn
	for range 10 {
		kept = append(kept, inProcessCycle(t, ctx))
	}
	const bound = 2 * bufconnSize
	// gRPC's client transport may still be finishing its close in its own
	// goroutines when stop returns; give it a moment.
	var grown int64
	deadline := time.Now().Add(5 * time.Second)
	for {
		grown = heapAfterGC() - base
		if grown < bound || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	t.Logf("heap after 10 InProcess cycles: %+d KiB (bound %d KiB)", grown/1024, bound/1024)
	if grown >= bound {
		t.Errorf("heap grew by %d KiB over 10 stopped InProcess cycles, want < %d KiB", grown/1024, bound/1024)
	}
	runtime.KeepAlive(kept)
}

// connector connects to a runtime in process.
type connector func(ctx context.Context, rt *Runtime) (grpc.ClientConnInterface, func(), error)

// BenchmarkInProcessPods runs 1,000 pods through the CRI calls actorlet
// makes per pod, 32 at a time over one connection, with an event stream
// consumed alongside: over Direct, and over InProcess for several bufconn
// buffer sizes.
func BenchmarkInProcessPods(b *testing.B) {
	const pods, workers = 1000, 32
	run := func(name string, connect connector) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				inProcessPods(b, ctx, connect, pods, workers)
			}
			b.ReportMetric(float64(pods*b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
	run("direct", func(_ context.Context, rt *Runtime) (grpc.ClientConnInterface, func(), error) {
		conn, stop := Direct(rt, nil)
		return conn, stop, nil
	})
	for _, size := range []int{64 << 10, bufconnSize, 1 << 20} {
		run(fmt.Sprintf("buffer=%dKiB", size>>10), func(ctx context.Context, rt *Runtime) (grpc.ClientConnInterface, func(), error) {
			return inProcess(ctx, rt, size)
		})
	}
}

func inProcessPods(b *testing.B, ctx context.Context, connect connector, pods, workers int) {
	rt, err := New(Options{Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	conn, stop, err := connect(ctx, rt)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	rc, ic := runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn)
	if _, err := ic.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
		b.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := rc.GetContainerEvents(sctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := events.Header(); err != nil {
		b.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			if _, err := events.Recv(); err != nil {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := benchPod(ctx, rc, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range pods {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	all, err := rc.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil || len(all.Containers) != pods {
		b.Fatalf("ListContainers: %d containers, %v", len(all.GetContainers()), err)
	}
	cancel()
	<-drained
}

// benchPod starts pod i as actorlet would: the sandbox, a look by pod
// UID, the container, its start and a look at the result.
func benchPod(ctx context.Context, rc runtimeapi.RuntimeServiceClient, i int) error {
	uid := fmt.Sprintf("uid-%d", i)
	cfg := podConfig(fmt.Sprintf("pod-%d", i), uid, 0)
	sb, err := rc.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		return err
	}
	sel := map[string]string{LabelPodUID: uid}
	if _, err := rc.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}}); err != nil {
		return err
	}
	cc := containerConfig("app", "busybox")
	cc.Labels[LabelPodUID] = uid
	c, err := rc.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cc, SandboxConfig: cfg})
	if err != nil {
		return err
	}
	if _, err := rc.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		return err
	}
	if _, err := rc.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sb.PodSandboxId, LabelSelector: sel}}); err != nil {
		return err
	}
	_, err = rc.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	return err
}
