package sim

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// statsPod runs a sandbox with one started container per env list and
// returns the sandbox ID and the container IDs.
func statsPod(t *testing.T, ctx context.Context, rt *Runtime, name string, envs ...[]string) (string, []string) {
	t.Helper()
	pull(t, ctx, rt, "busybox")
	cfg := podConfig(name, "uid-"+name, 0)
	sb := runPod(t, ctx, rt, cfg)
	var ids []string
	for i, env := range envs {
		id := createContainer(t, ctx, rt, sb, cfg, containerConfig(string(rune('a'+i)), "busybox", env...))
		startContainer(t, ctx, rt, id)
		ids = append(ids, id)
	}
	return sb, ids
}

func containerStats(t *testing.T, ctx context.Context, rt *Runtime, id string) *runtimeapi.ContainerStats {
	t.Helper()
	resp, err := rt.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
	noErr(t, err, "ContainerStats "+id)
	return resp.Stats
}

// wantUsage checks the CPU and memory of s.
func wantUsage(t *testing.T, s *runtimeapi.ContainerStats, cpuTime, nanoCores, ws, rss uint64) {
	t.Helper()
	got := [4]uint64{s.Cpu.UsageCoreNanoSeconds.GetValue(), s.Cpu.UsageNanoCores.GetValue(),
		s.Memory.WorkingSetBytes.GetValue(), s.Memory.RssBytes.GetValue()}
	if want := [4]uint64{cpuTime, nanoCores, ws, rss}; got != want {
		t.Errorf("container %s: [cpu ns, nanocores, working set, rss] = %v, want %v", s.Attributes.Id, got, want)
	}
	if s.Memory.UsageBytes.GetValue() != ws {
		t.Errorf("container %s: usage bytes %d, want the working set %d", s.Attributes.Id, s.Memory.UsageBytes.GetValue(), ws)
	}
}

func TestStatsDefaultUsage(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	_, ids := statsPod(t, ctx, rt, "p", nil)
	clk.Step(10 * time.Second)
	// 1 millicore for 10s is 10ms of CPU.
	wantUsage(t, containerStats(t, ctx, rt, ids[0]), 10_000_000, 1_000_000, 8<<20, 4<<20)
}

// TestSetUsage changes the rate of a running container: CPU time already
// used is kept, and it stops growing when the container exits.
func TestSetUsage(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	_, ids := statsPod(t, ctx, rt, "p", nil)
	id := ids[0]

	clk.Step(10 * time.Second)
	noErr(t, rt.SetUsage(id, 500, 100<<20), "SetUsage")
	wantUsage(t, containerStats(t, ctx, rt, id), 10_000_000, 500_000_000, 100<<20, 100<<20)
	clk.Step(4 * time.Second)
	wantUsage(t, containerStats(t, ctx, rt, id), 10_000_000+2_000_000_000, 500_000_000, 100<<20, 100<<20)

	_, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id})
	noErr(t, err, "StopContainer")
	clk.Step(time.Hour)
	wantUsage(t, containerStats(t, ctx, rt, id), 2_010_000_000, 0, 0, 0)
	noErr(t, rt.SetUsage(id, 4000, 1), "SetUsage on an exited container")
	clk.Step(time.Hour)
	wantUsage(t, containerStats(t, ctx, rt, id), 2_010_000_000, 0, 0, 0)
}

// TestSetUsageBeforeStart: the rate applies from started_at.
func TestSetUsageBeforeStart(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "uid-p", 0)
	sb := runPod(t, ctx, rt, cfg)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("a", "busybox"))
	noErr(t, rt.SetUsage(id, 2000, 1<<30), "SetUsage")
	clk.Step(time.Minute)
	wantUsage(t, containerStats(t, ctx, rt, id), 0, 0, 0, 0)
	startContainer(t, ctx, rt, id)
	clk.Step(3 * time.Second)
	wantUsage(t, containerStats(t, ctx, rt, id), 6_000_000_000, 2_000_000_000, 1<<30, 1<<30)
}

func TestSetUsageErrors(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	_, ids := statsPod(t, ctx, rt, "p", nil)
	if err := rt.SetUsage("nope", 1, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetUsage of an unknown container = %v, want ErrNotFound", err)
	}
	for _, v := range [][2]int64{{-1, 0}, {0, -1}, {maxMilliCores + 1, 0}} {
		if err := rt.SetUsage(ids[0], v[0], v[1]); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("SetUsage(%d, %d) = %v, want ErrInvalidArgument", v[0], v[1], err)
		}
	}
}

// TestUsageFromEnv gives created containers their env's usage the way
// CreateContainer does.
func TestUsageFromEnv(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "uid-p", 0)
	sb := runPod(t, ctx, rt, cfg)

	for _, tc := range []struct {
		env       []string
		nanoCores uint64
		ws, rss   uint64
		wantErr   bool
	}{
		{env: []string{EnvCPUMilliCores, "250", EnvMemoryBytes, "104857600"}, nanoCores: 250_000_000, ws: 100 << 20, rss: 100 << 20},
		{env: []string{EnvCPUMilliCores, "0"}, nanoCores: 0, ws: 8 << 20, rss: 4 << 20},
		{env: []string{EnvMemoryBytes, "1"}, nanoCores: 1_000_000, ws: 1, rss: 1},
		{env: []string{EnvCPUMilliCores, "-1"}, wantErr: true},
		{env: []string{EnvCPUMilliCores, "1.5"}, wantErr: true},
		{env: []string{EnvMemoryBytes, "1Gi"}, wantErr: true},
	} {
		kvs := containerConfig("x", "busybox", tc.env...).Envs
		_, _, perr := parseUsage(kvs)
		if tc.wantErr {
			if !errors.Is(perr, ErrInvalidArgument) {
				t.Errorf("env %v: parseUsage = %v, want ErrInvalidArgument", tc.env, perr)
			}
			continue
		}
		noErr(t, perr, "parseUsage")
		id := createContainer(t, ctx, rt, sb, cfg, containerConfig("c"+tc.env[1], "busybox"))
		rt.mu.Lock()
		err := rt.setUsageFromEnvLocked(rt.containers[id], kvs)
		rt.mu.Unlock()
		noErr(t, err, "setUsageFromEnvLocked")
		startContainer(t, ctx, rt, id)
		clk.Step(2 * time.Second)
		wantUsage(t, containerStats(t, ctx, rt, id), 2*tc.nanoCores, tc.nanoCores, tc.ws, tc.rss)
	}
}

// TestUsageFromEnvCreateContainer is TestUsageFromEnv through
// CreateContainer.
func TestUsageFromEnvCreateContainer(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	_, ids := statsPod(t, ctx, rt, "p", []string{EnvCPUMilliCores, "250", EnvMemoryBytes, "1000"})
	clk.Step(4 * time.Second)
	s := containerStats(t, ctx, rt, ids[0])
	wantUsage(t, s, 1_000_000_000, 250_000_000, 1000, 1000)
}

// TestSandboxStatsConsistent: sandbox stats are the sums of the stats of
// its containers taken at the same instant, and writable layers are on
// the filesystem ImageFsInfo reports.
func TestSandboxStatsConsistent(t *testing.T) {
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk})
	sb, ids := statsPod(t, ctx, rt, "p", nil, nil, nil)
	noErr(t, rt.SetUsage(ids[1], 100, 1<<20), "SetUsage")
	noErr(t, rt.SetUsage(ids[2], 300, 3<<20), "SetUsage")
	clk.Step(10 * time.Second)
	_, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ids[2]})
	noErr(t, err, "StopContainer")
	clk.Step(10 * time.Second)

	resp, err := rt.PodSandboxStats(ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: sb})
	noErr(t, err, "PodSandboxStats")
	ps := resp.Stats.Linux
	// CPU: a 1m for 20s, b 100m for 20s, c 300m for 10s (then exited).
	if got, want := ps.Cpu.UsageCoreNanoSeconds.GetValue(), uint64(20_000_000+2_000_000_000+3_000_000_000); got != want {
		t.Errorf("sandbox CPU time = %d, want %d (exited containers included)", got, want)
	}
	if got, want := ps.Cpu.UsageNanoCores.GetValue(), uint64(101_000_000); got != want {
		t.Errorf("sandbox nanocores = %d, want %d", got, want)
	}
	if got, want := ps.Memory.WorkingSetBytes.GetValue(), uint64(8<<20+1<<20); got != want {
		t.Errorf("sandbox working set = %d, want %d", got, want)
	}
	if got := ps.Process.ProcessCount.GetValue(); got != 2 {
		t.Errorf("process count = %d, want 2", got)
	}
	list, err := rt.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{PodSandboxId: sb}})
	noErr(t, err, "ListContainerStats")
	if len(list.Stats) != len(ps.Containers) {
		t.Fatalf("sandbox has %d container stats, ListContainerStats %d", len(ps.Containers), len(list.Stats))
	}
	for i := range list.Stats {
		if !proto.Equal(list.Stats[i], ps.Containers[i]) {
			t.Errorf("container stats differ:\nsandbox: %v\nlist:    %v", ps.Containers[i], list.Stats[i])
		}
		if ts := ps.Containers[i].Cpu.Timestamp; ts != ps.Cpu.Timestamp {
			t.Errorf("container timestamp %d, sandbox %d", ts, ps.Cpu.Timestamp)
		}
	}

	fs, err := rt.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	noErr(t, err, "ImageFsInfo")
	mp := fs.ImageFilesystems[0].FsId.Mountpoint
	for _, s := range list.Stats {
		if got := s.WritableLayer.FsId.Mountpoint; got != mp {
			t.Errorf("writable layer of %s on %q, image filesystem %q", s.Attributes.Id, got, mp)
		}
	}
	rt.mu.Lock()
	b, n := rt.writableLayersLocked()
	rt.mu.Unlock()
	if b != 3*simWritableLayer || n != 3 {
		t.Errorf("writable layers = %d bytes, %d inodes; want 3 layers", b, n)
	}
}

func TestCPUTimeSaturates(t *testing.T) {
	u := usage{milliCores: maxMilliCores}
	if got := u.cpuTime(1, 1<<62); got != ^uint64(0) {
		t.Errorf("cpuTime = %d, want saturation", got)
	}
	u = usage{milliCores: 1500, cpuBase: 7, mark: 10}
	if got := u.cpuTime(5, 1010); got != 7+1500 {
		t.Errorf("cpuTime = %d, want %d", got, 7+1500)
	}
}

// TestUsageForgottenWithContainer: the usage of a removed container does
// not stay in memory.
func TestUsageForgottenWithContainer(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	_, ids := statsPod(t, ctx, rt, "p", nil)
	noErr(t, rt.SetUsage(ids[0], 5, 5), "SetUsage")
	rt.mu.Lock()
	k := weak.Make(rt.containers[ids[0]])
	rt.mu.Unlock()
	_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: ids[0]})
	noErr(t, err, "RemoveContainer")
	waitFor(t, "the usage of the removed container to be dropped", func() bool {
		runtime.GC()
		_, ok := usages.Load(k)
		return !ok
	})
}
