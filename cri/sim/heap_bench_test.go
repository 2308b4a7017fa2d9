package sim

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// heapBenchPods is how many pods BenchmarkHeapPerPod runs.
const heapBenchPods = 2000

// BenchmarkHeapPerPod measures what the runtime keeps per running pod, a
// READY sandbox with one running container: the live heap (HeapAlloc
// after two GCs) once heapBenchPods pods run, less the heap before them,
// over heapBenchPods: bytes/pod. The configs are shaped as actorlet's
// (package podspec: its labels and annotations, namespace options,
// resources of a BestEffort container, the termination-message and
// /etc/hosts mounts, a log directory), made anew for each pod, so that
// the strings the runtime keeps of them count, and handed over through
// Direct, as an agent's are. ns/op is the time the pods took to create.
// test/bench's BenchmarkMemoryPerPod measures the same with the configs
// an agent makes (bytes/pod-sim).
func BenchmarkHeapPerPod(b *testing.B) {
	// A first, unmeasured run makes the process's one-time allocations
	// (lazily built protobuf and gRPC state).
	heapPerPod(b, 100)
	var total float64
	for range b.N {
		total += heapPerPod(b, heapBenchPods)
	}
	b.ReportMetric(total/float64(b.N), "bytes/pod")
}

// heapPerPod is the heap growth per pod of a new runtime running pods
// pods. Only their creation is timed.
func heapPerPod(b *testing.B, pods int) float64 {
	ctx := context.Background()
	b.StopTimer()
	defer b.StartTimer()
	rt, err := New(Options{Logger: zap.NewNop(), PodCIDR: "10.128.0.0/16"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	conn, stop := Direct(rt, nil)
	defer stop()
	cl := runtimeapi.NewRuntimeServiceClient(conn)
	if _, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: heapBenchImage}}); err != nil {
		b.Fatal(err)
	}
	heap0 := liveHeap()
	b.StartTimer()
	for i := range pods {
		if err := runHeapBenchPod(ctx, cl, i); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	heap1 := liveHeap()
	if info := rt.Info(); info.Running != pods {
		b.Fatalf("%d containers running, want %d", info.Running, pods)
	}
	return (float64(heap1) - float64(heap0)) / float64(pods)
}

const heapBenchImage = "registry.k8s.io/pause:3.10"

// runHeapBenchPod runs pod i's sandbox and container, as actorlet would.
func runHeapBenchPod(ctx context.Context, cl runtimeapi.RuntimeServiceClient, i int) error {
	name := fmt.Sprintf("bench-%05d", i)
	uid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	podDir := "/var/lib/actorlet/pods/" + uid
	nsOpts := func() *runtimeapi.NamespaceOption {
		return &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "bench", Uid: uid, Attempt: 1},
		Hostname: name,
		Labels: map[string]string{
			"app": "bench", LabelPodUID: uid, "io.kubernetes.pod.name": name,
			"io.kubernetes.pod.namespace": "bench", benchLabelManaged: "true",
		},
		Annotations:  map[string]string{},
		LogDirectory: "/var/log/pods/bench_" + name + "_" + uid,
		DnsConfig:    &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"bench.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: nsOpts()},
		},
	}
	sb, err := cl.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		return err
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 1},
		Image:    &runtimeapi.ImageSpec{Image: heapBenchImage, UserSpecifiedImage: heapBenchImage},
		Labels: map[string]string{
			LabelPodUID: uid, "io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "bench",
			benchLabelContainerName: "app", benchLabelManaged: "true",
		},
		Annotations: map[string]string{
			"io.kubernetes.container.restartCount":             "0",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "File",
		},
		LogPath: "app/0.log",
		Envs:    []*runtimeapi.KeyValue{{Key: "KUBERNETES_SERVICE_HOST", Value: []byte("10.96.0.1")}},
		Mounts: []*runtimeapi.Mount{
			{ContainerPath: "/dev/termination-log", HostPath: podDir + "/termination.app.1"},
			{ContainerPath: "/etc/hosts", HostPath: podDir + "/etc-hosts"},
		},
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       &runtimeapi.LinuxContainerResources{CpuShares: 2, OomScoreAdj: 1000},
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: nsOpts()},
		},
	}
	c, err := cl.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cfg, SandboxConfig: sbCfg})
	if err != nil {
		return err
	}
	_, err = cl.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId})
	return err
}

// liveHeap is HeapAlloc after two GCs (the second frees what finalizers
// and cleanups of the first let go).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
