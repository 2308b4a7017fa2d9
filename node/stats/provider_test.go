package stats

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is a Provider on the simulated runtime and a fixed cgroup v1 host, with two pods:
// default/web (app at 250m and 100 MiB, sidecar at 1 core and 50 MiB) and kube-system/idle
// (one container at the simulator's default 1m, 8 MiB), all started at t0.
type fixture struct {
	clk      *clocktesting.FakeClock
	rt       *simRuntime
	p        *Provider
	web, idl *simPod
}

func newFixture(t *testing.T, opts simRuntimeOpts) *fixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	rt := newSimRuntime(t, clk, opts)
	f := hostV1()
	f.statfs["/var/log/pods"] = FsInfo{CapacityBytes: 50 * gib, AvailableBytes: 20 * gib, Inodes: 500, InodesFree: 100}
	f.du = map[string][2]uint64{
		"/var/log/pods/default_web_uid-web/app":     {12288, 2},
		"/var/log/pods/default_web_uid-web/sidecar": {4096, 1},
	}
	p, err := New(rt, Options{NodeName: "node-1", RootDir: "/var/lib/actorlet", PodLogsDir: "/var/log/pods", FS: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{clk: clk, rt: rt, p: p}
	fx.web = rt.runPod(t, "default", "web", 0)
	rt.use(t, fx.web, "app", 250, 100*mib)
	rt.use(t, fx.web, "sidecar", 1000, 50*mib)
	fx.idl = rt.runPod(t, "kube-system", "idle", 0)
	rt.start(t, fx.idl, "pause")
	return fx
}

func (fx *fixture) summary(t *testing.T, onlyCPUAndMemory bool) *statsapi.Summary {
	t.Helper()
	s, err := fx.p.Summary(context.Background(), onlyCPUAndMemory)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func findPod(t *testing.T, s *statsapi.Summary, name string) *statsapi.PodStats {
	t.Helper()
	for i := range s.Pods {
		if s.Pods[i].PodRef.Name == name {
			return &s.Pods[i]
		}
	}
	t.Fatalf("pod %s not in the summary (%d pods)", name, len(s.Pods))
	return nil
}

func findContainer(t *testing.T, p *statsapi.PodStats, name string) *statsapi.ContainerStats {
	t.Helper()
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return &p.Containers[i]
		}
	}
	t.Fatalf("container %s not in pod %s", name, p.PodRef.Name)
	return nil
}

// wantCPUMem checks CPU time, rate and working set (also usage and RSS).
func wantCPUMem(t *testing.T, what string, cpu *statsapi.CPUStats, mem *statsapi.MemoryStats, cpuNs, nanoCores, ws uint64, at time.Time) {
	t.Helper()
	eq(t, what+" cpu time", cpu.UsageCoreNanoSeconds, cpuNs)
	eq(t, what+" nanocores", cpu.UsageNanoCores, nanoCores)
	eq(t, what+" working set", mem.WorkingSetBytes, ws)
	eq(t, what+" memory usage", mem.UsageBytes, ws)
	if !cpu.Time.Time.Equal(at) || !mem.Time.Time.Equal(at) {
		t.Errorf("%s sampled at %v (cpu), %v (memory), want %v", what, cpu.Time, mem.Time, at)
	}
}

func testPods(t *testing.T, opts simRuntimeOpts) {
	fx := newFixture(t, opts)
	fx.clk.Step(10 * time.Second)
	now := t0.Add(10 * time.Second)
	s := fx.summary(t, false)
	if len(s.Pods) != 2 || s.Pods[0].PodRef.Namespace != "default" || s.Pods[1].PodRef.Namespace != "kube-system" {
		t.Fatalf("pods = %+v, want default/web and kube-system/idle", s.Pods)
	}
	web := findPod(t, s, "web")
	if web.PodRef != (statsapi.PodReference{Name: "web", Namespace: "default", UID: "uid-web"}) || !web.StartTime.Time.Equal(t0) {
		t.Errorf("web: ref %+v, start %v", web.PodRef, web.StartTime)
	}
	app, side := findContainer(t, web, "app"), findContainer(t, web, "sidecar")
	if !app.StartTime.Time.Equal(t0) {
		t.Errorf("app start %v, want %v", app.StartTime, t0)
	}
	wantCPUMem(t, "app", app.CPU, app.Memory, 2_500_000_000, 250_000_000, 100*mib, now)
	eq(t, "app rss", app.Memory.RSSBytes, 100*mib)
	wantCPUMem(t, "sidecar", side.CPU, side.Memory, 10_000_000_000, 1_000_000_000, 50*mib, now)
	wantCPUMem(t, "web", web.CPU, web.Memory, 12_500_000_000, 1_250_000_000, 150*mib, now)
	idle := findPod(t, s, "idle")
	wantCPUMem(t, "idle", idle.CPU, idle.Memory, 10_000_000, 1_000_000, 8*mib, now)

	// Disk: writable layers (4 KiB each, on the simulator's image fs, which this host cannot
	// statfs) and logs.
	eq(t, "app rootfs", app.Rootfs.UsedBytes, 4096)
	if app.Rootfs.CapacityBytes != nil {
		t.Errorf("app rootfs capacity %d, want nil: the image fs is not on this host", *app.Rootfs.CapacityBytes)
	}
	eq(t, "app logs", app.Logs.UsedBytes, 12288)
	eq(t, "app logs capacity", app.Logs.CapacityBytes, 50*gib)
	eq(t, "web ephemeral storage", web.EphemeralStorage.UsedBytes, 4096+12288+4096+4096)
	eq(t, "web ephemeral inodes", web.EphemeralStorage.InodesUsed, 1+2+1+1)
	eq(t, "web ephemeral capacity", web.EphemeralStorage.CapacityBytes, 100*gib)
	if findContainer(t, idle, "pause").Logs != nil {
		t.Error("idle/pause has logs stats but no log directory")
	}
	img := s.Node.Runtime.ImageFs
	eq(t, "image fs used", img.UsedBytes, 4096+1<<20)
	if img.CapacityBytes != nil || img.AvailableBytes != nil {
		t.Errorf("image fs capacity %v available %v, want nil", img.CapacityBytes, img.AvailableBytes)
	}
}

func TestPodsFromSandboxStats(t *testing.T) { testPods(t, simRuntimeOpts{}) }

// TestPodsFromContainerStats: a runtime without ListPodSandboxStats gets the pod figures
// summed from ListContainerStats.
func TestPodsFromContainerStats(t *testing.T) {
	testPods(t, simRuntimeOpts{noSandboxStats: true})
	fx := newFixture(t, simRuntimeOpts{noSandboxStats: true})
	s := fx.summary(t, false)
	if web := findPod(t, s, "web"); web.Network != nil || web.ProcessStats != nil {
		t.Errorf("web has network %v, process stats %v without sandbox stats", web.Network, web.ProcessStats)
	}
}

// TestNanoCoresFromSamples: when the runtime gives no usageNanoCores, it is the rate between
// two samples, per container.
func TestNanoCoresFromSamples(t *testing.T) {
	fx := newFixture(t, simRuntimeOpts{noSandboxStats: true, noNanoCores: true})
	fx.clk.Step(10 * time.Second)
	s := fx.summary(t, true)
	app := findContainer(t, findPod(t, s, "web"), "app")
	if app.CPU.UsageNanoCores != nil {
		t.Errorf("app nanocores on the first sample = %d, want nil", *app.CPU.UsageNanoCores)
	}
	if web := findPod(t, s, "web"); web.CPU.UsageNanoCores != nil {
		t.Errorf("web nanocores = %d with a container rate unknown, want nil", *web.CPU.UsageNanoCores)
	}
	if err := fx.rt.sim.SetUsage(fx.web.containers["app"], 2000, 100*mib); err != nil {
		t.Fatal(err)
	}
	fx.clk.Step(5 * time.Second)
	s = fx.summary(t, true)
	web := findPod(t, s, "web")
	eq(t, "app nanocores", findContainer(t, web, "app").CPU.UsageNanoCores, 2_000_000_000)
	eq(t, "sidecar nanocores", findContainer(t, web, "sidecar").CPU.UsageNanoCores, 1_000_000_000)
	eq(t, "web nanocores", web.CPU.UsageNanoCores, 3_000_000_000)
	// The samples of a removed container are forgotten after 5 minutes.
	if err := fx.rt.RemoveContainer(context.Background(), fx.web.containers["app"]); err != nil {
		t.Fatal(err)
	}
	before := fx.p.rates.len()
	fx.clk.Step(6 * time.Minute)
	fx.summary(t, true)
	if got := fx.p.rates.len(); got != before-1 {
		t.Errorf("%d CPU series kept after the app was removed, want %d", got, before-1)
	}
}

// TestPodReportsCurrentSandbox: of a pod's sandboxes, the READY one is reported, with only
// its running containers.
func TestPodReportsCurrentSandbox(t *testing.T) {
	fx := newFixture(t, simRuntimeOpts{})
	ctx := context.Background()
	if err := fx.rt.StopPodSandbox(ctx, fx.idl.sandbox); err != nil {
		t.Fatal(err)
	}
	s := fx.summary(t, true)
	if idle := findPod(t, s, "idle"); len(idle.Containers) != 0 {
		t.Errorf("stopped pod has containers %+v", idle.Containers)
	}
	again := fx.rt.runPod(t, "kube-system", "idle", 1)
	fx.rt.use(t, again, "pause", 7, 7)
	fx.clk.Step(time.Second)
	s = fx.summary(t, true)
	idle := findPod(t, s, "idle")
	if len(s.Pods) != 2 || len(idle.Containers) != 1 {
		t.Fatalf("pods %d, idle containers %+v", len(s.Pods), idle.Containers)
	}
	wantCPUMem(t, "idle", idle.CPU, idle.Memory, 7_000_000, 7_000_000, 7, t0.Add(time.Second))
}

// TestSetUsageShowsInSummary is how eviction tests drive memory pressure.
func TestSetUsageShowsInSummary(t *testing.T) {
	fx := newFixture(t, simRuntimeOpts{})
	if err := fx.rt.sim.SetUsage(fx.web.containers["sidecar"], 0, 3*gib); err != nil {
		t.Fatal(err)
	}
	web := findPod(t, fx.summary(t, false), "web")
	eq(t, "web working set", web.Memory.WorkingSetBytes, 100*mib+3*gib)
}

func TestRuntimeErrorFailsSummary(t *testing.T) {
	fx := newFixture(t, simRuntimeOpts{})
	if err := fx.rt.sim.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.p.Summary(context.Background(), true); err == nil || !strings.Contains(err.Error(), "stats:") {
		t.Errorf("Summary on a closed runtime = %v, want an error", err)
	}
}

func TestResourceCollector(t *testing.T) {
	fx := newFixture(t, simRuntimeOpts{})
	fx.clk.Step(10 * time.Second)
	c := NewResourceCollector(fx.p, nil)
	// Samples are stamped t0+10s (1893553455000 ms); the node's come from the provider's clock.
	want := `
# HELP container_cpu_usage_seconds_total Cumulative CPU time consumed by the container, in core-seconds.
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 2.5 1893553455000
container_cpu_usage_seconds_total{container="pause",namespace="kube-system",pod="idle"} 0.01 1893553455000
container_cpu_usage_seconds_total{container="sidecar",namespace="default",pod="web"} 10 1893553455000
# HELP container_memory_working_set_bytes Current working set of the container, in bytes.
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 1.048576e+08 1893553455000
container_memory_working_set_bytes{container="pause",namespace="kube-system",pod="idle"} 8.388608e+06 1893553455000
container_memory_working_set_bytes{container="sidecar",namespace="default",pod="web"} 5.24288e+07 1893553455000
# HELP container_start_time_seconds Start time of the container since the Unix epoch, in seconds.
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="default",pod="web"} 1.893553445e+09
container_start_time_seconds{container="pause",namespace="kube-system",pod="idle"} 1.893553445e+09
container_start_time_seconds{container="sidecar",namespace="default",pod="web"} 1.893553445e+09
# HELP node_cpu_usage_seconds_total Cumulative CPU time consumed by the node, in core-seconds.
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 123.456789 1893553455000
# HELP node_memory_working_set_bytes Current working set of the node, in bytes.
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 8.589934592e+09 1893553455000
# HELP pod_cpu_usage_seconds_total Cumulative CPU time consumed by the pod, in core-seconds.
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="default",pod="web"} 12.5 1893553455000
pod_cpu_usage_seconds_total{namespace="kube-system",pod="idle"} 0.01 1893553455000
# HELP pod_memory_working_set_bytes Current working set of the pod, in bytes.
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="default",pod="web"} 1.572864e+08 1893553455000
pod_memory_working_set_bytes{namespace="kube-system",pod="idle"} 8.388608e+06 1893553455000
# HELP resource_scrape_error 1 if there was an error while getting container metrics, 0 otherwise.
# TYPE resource_scrape_error gauge
resource_scrape_error 0
# HELP scrape_error 1 if there was an error while getting container metrics, 0 otherwise (deprecated: see resource_scrape_error).
# TYPE scrape_error gauge
scrape_error 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// A failed summary exports the two error gauges only.
	if err := fx.rt.sim.Close(); err != nil {
		t.Fatal(err)
	}
	want = `
# HELP resource_scrape_error 1 if there was an error while getting container metrics, 0 otherwise.
# TYPE resource_scrape_error gauge
resource_scrape_error 1
# HELP scrape_error 1 if there was an error while getting container metrics, 0 otherwise (deprecated: see resource_scrape_error).
# TYPE scrape_error gauge
scrape_error 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
