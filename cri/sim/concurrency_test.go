package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// lifecycle is the unary API both *Runtime and a gRPC client offer,
// adapted to one signature.
type lifecycle struct {
	run    func(context.Context, *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error)
	create func(context.Context, *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error)
	start  func(context.Context, *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error)
	stop   func(context.Context, *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error)
	status func(context.Context, *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error)
	list   func(context.Context, *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error)
	stopSB func(context.Context, *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error)
	rmSB   func(context.Context, *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error)
}

func directLifecycle(rt *Runtime) lifecycle {
	return lifecycle{rt.RunPodSandbox, rt.CreateContainer, rt.StartContainer, rt.StopContainer, rt.ContainerStatus, rt.ListContainers, rt.StopPodSandbox, rt.RemovePodSandbox}
}

func clientLifecycle(c *client) lifecycle {
	return lifecycle{
		run: func(ctx context.Context, r *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
			return c.RunPodSandbox(ctx, r)
		},
		create: func(ctx context.Context, r *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
			return c.CreateContainer(ctx, r)
		},
		start: func(ctx context.Context, r *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
			return c.StartContainer(ctx, r)
		},
		stop: func(ctx context.Context, r *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
			return c.StopContainer(ctx, r)
		},
		status: func(ctx context.Context, r *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
			return c.ContainerStatus(ctx, r)
		},
		list: func(ctx context.Context, r *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
			return c.ListContainers(ctx, r)
		},
		stopSB: func(ctx context.Context, r *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
			return c.StopPodSandbox(ctx, r)
		},
		rmSB: func(ctx context.Context, r *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
			return c.RemovePodSandbox(ctx, r)
		},
	}
}

// podLifecycle runs one pod with a long-running and a quickly exiting
// container to the end, checking what it observes.
func podLifecycle(ctx context.Context, api lifecycle, name string) error {
	cfg := podConfig(name, "uid-"+name, 0)
	sb, err := api.run(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		return fmt.Errorf("run %s: %w", name, err)
	}
	var ids []string
	for _, cc := range []*runtimeapi.ContainerConfig{
		containerConfig("srv", "busybox"),
		containerConfig("job", "busybox", EnvExitAfter, "1ms", EnvExitCode, "2"),
	} {
		cr, err := api.create(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cc, SandboxConfig: cfg})
		if err != nil {
			return fmt.Errorf("create in %s: %w", name, err)
		}
		if _, err := api.start(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.ContainerId}); err != nil {
			return fmt.Errorf("start in %s: %w", name, err)
		}
		ids = append(ids, cr.ContainerId)
	}
	// Wait for the job to exit on the real clock.
	for {
		st, err := api.status(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ids[1]})
		if err != nil {
			return fmt.Errorf("status in %s: %w", name, err)
		}
		if st.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			if st.Status.ExitCode != 2 {
				return fmt.Errorf("job in %s exited %d", name, st.Status.ExitCode)
			}
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	if _, err := api.stop(ctx, &runtimeapi.StopContainerRequest{ContainerId: ids[0], Timeout: 5}); err != nil {
		return fmt.Errorf("stop in %s: %w", name, err)
	}
	list, err := api.list(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sb.PodSandboxId}})
	if err != nil {
		return err
	}
	for _, c := range list.Containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("container %s of %s is %v after stop", c.Metadata.Name, name, c.State)
		}
	}
	if _, err := api.stopSB(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId}); err != nil {
		return err
	}
	_, err = api.rmSB(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId})
	return err
}

// TestConcurrentLifecycles runs many pods at once, half directly and half
// over in-process gRPC, with readers and an event subscriber alongside.
func TestConcurrentLifecycles(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{Logger: zap.NewNop()})
	pull(t, ctx, rt, "busybox")
	conn, stop, err := InProcess(ctx, rt)
	noErr(t, err, "InProcess")
	defer stop()
	c := &client{RuntimeServiceClient: runtimeapi.NewRuntimeServiceClient(conn), ImageServiceClient: runtimeapi.NewImageServiceClient(conn), conn: conn}

	events := subscribe(t, ctx, c)
	var nEvents atomic.Int64
	eventsDone := make(chan struct{})
	go func() {
		defer close(eventsDone)
		for {
			if _, err := events.Recv(); err != nil {
				return
			}
			nEvents.Add(1)
		}
	}()

	workers, podsEach := 16, 20
	if testing.Short() {
		workers, podsEach = 8, 5
	}
	readCtx, stopReaders := context.WithCancel(ctx)
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for readCtx.Err() == nil {
				_, _ = rt.ListContainers(readCtx, &runtimeapi.ListContainersRequest{})
				_, _ = c.ListPodSandbox(readCtx, &runtimeapi.ListPodSandboxRequest{})
				_, _ = rt.Status(readCtx, &runtimeapi.StatusRequest{Verbose: true})
			}
		})
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*podsEach)
	for w := range workers {
		api := directLifecycle(rt)
		if w%2 == 1 {
			api = clientLifecycle(c)
		}
		wg.Go(func() {
			for p := range podsEach {
				if err := podLifecycle(ctx, api, fmt.Sprintf("w%d-p%d", w, p)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	stopReaders()
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	in := rt.Info()
	if in.Sandboxes != 0 || in.Containers != 0 || in.Running != 0 || in.PodIPsInUse != 0 || in.ViolationCount != 0 {
		t.Fatalf("info after all pods = %+v", in)
	}
	// 12 events per pod: the sandbox's created/started/stopped/deleted
	// and the same four for each of its two containers.
	want := int64(workers * podsEach * 12)
	waitFor(t, fmt.Sprintf("%d events", want), func() bool { return nEvents.Load() >= want })
	stop()
	<-eventsDone
	if got := nEvents.Load(); got != want {
		t.Fatalf("subscriber got %d events, want %d", got, want)
	}
}

// TestNoGoroutinePerContainer: thousands of running containers with
// pending exits cost no goroutines.
func TestNoGoroutinePerContainer(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{Logger: zap.NewNop()})
	pull(t, ctx, rt, "busybox")
	n := 2000
	if testing.Short() {
		n = 200
	}
	before := runtime.NumGoroutine()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := range n {
		cfg := podConfig(fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), 0)
		sb := runPod(t, ctx, rt, cfg)
		id := createContainer(t, ctx, rt, sb, cfg, containerConfig("c", "busybox", EnvExitAfter, "1h"))
		startContainer(t, ctx, rt, id)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if after := runtime.NumGoroutine(); after > before+5 {
		t.Fatalf("goroutines grew from %d to %d for %d running containers", before, after, n)
	}
	perPod := (m1.HeapAlloc - min(m0.HeapAlloc, m1.HeapAlloc)) / uint64(n)
	t.Logf("heap per pod (sandbox + running container + timer): ~%d bytes", perPod)
	if in := rt.Info(); in.Running != n {
		t.Fatalf("running = %d", in.Running)
	}
	noErr(t, rt.Close(), "Close")
}

func BenchmarkPodLifecycle(b *testing.B) {
	ctx := context.Background()
	rt, err := New(Options{Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
		b.Fatal(err)
	}
	cc := containerConfig("c", "busybox")
	b.ResetTimer()
	for i := range b.N {
		cfg := podConfig(fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), 0)
		sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		cr, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cc})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.ContainerId}); err != nil {
			b.Fatal(err)
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId}); err != nil {
			b.Fatal(err)
		}
	}
}
