package stats

import (
	"context"
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func newNodeProvider(t *testing.T, f FS, clk *clocktesting.FakeClock) *Provider {
	t.Helper()
	rt := newSimRuntime(t, clk, simRuntimeOpts{})
	p, err := New(rt, Options{NodeName: "node-1", RootDir: "/var/lib/actorlet", FS: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func eq(t *testing.T, what string, got *uint64, want uint64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %d", what, want)
	} else if *got != want {
		t.Errorf("%s = %d, want %d", what, *got, want)
	}
}

func TestNodeCgroupV1(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	f := hostV1()
	p := newNodeProvider(t, f, clk)
	s, err := p.Summary(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	n := s.Node
	if n.NodeName != "node-1" || !n.StartTime.Time.Equal(time.Unix(1_700_000_000, 0)) {
		t.Errorf("node name %q start %v", n.NodeName, n.StartTime)
	}
	eq(t, "cpu time", n.CPU.UsageCoreNanoSeconds, 123456789000)
	if n.CPU.UsageNanoCores != nil {
		t.Errorf("nanocores on the first sample = %d, want nil", *n.CPU.UsageNanoCores)
	}
	eq(t, "memory usage", n.Memory.UsageBytes, 10*gib)
	eq(t, "working set", n.Memory.WorkingSetBytes, 8*gib)
	eq(t, "available", n.Memory.AvailableBytes, 8*gib)
	eq(t, "rss", n.Memory.RSSBytes, 3*gib)
	eq(t, "page faults", n.Memory.PageFaults, 77)
	eq(t, "major page faults", n.Memory.MajorPageFaults, 7)
	eq(t, "fs capacity", n.Fs.CapacityBytes, 100*gib)
	eq(t, "fs available", n.Fs.AvailableBytes, 60*gib)
	eq(t, "fs used", n.Fs.UsedBytes, 35*gib)
	eq(t, "fs inodes", n.Fs.Inodes, 1000)
	eq(t, "fs inodes free", n.Fs.InodesFree, 400)
	eq(t, "fs inodes used", n.Fs.InodesUsed, 600)
	if n.Rlimit == nil || *n.Rlimit.MaxPID != 4194304 || *n.Rlimit.NumOfRunningProcesses != 412 {
		t.Errorf("rlimit = %+v, want maxpid 4194304, curproc 412 (from /proc/loadavg)", n.Rlimit)
	}

	// A second sample 10s later with 5 more CPU-seconds: half a core.
	f.files["/sys/fs/cgroup/cpuacct/cpuacct.usage"] = "128456789000\n"
	clk.Step(10 * time.Second)
	s, err = p.Summary(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "nanocores", s.Node.CPU.UsageNanoCores, 500_000_000)
	if s.Node.Fs != nil || s.Node.Rlimit != nil || s.Node.Runtime != nil {
		t.Errorf("CPU-and-memory summary has fs %v, rlimit %v, runtime %v", s.Node.Fs, s.Node.Rlimit, s.Node.Runtime)
	}
}

func TestNodeCgroupV2(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	p := newNodeProvider(t, hostV2(), clk)
	s, err := p.Summary(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	n := s.Node
	eq(t, "cpu time", n.CPU.UsageCoreNanoSeconds, 5_000_000_000)
	// The v2 root has no memory.current: usage is MemTotal - MemFree = 12 GiB.
	eq(t, "memory usage", n.Memory.UsageBytes, 12*gib)
	eq(t, "working set", n.Memory.WorkingSetBytes, 11*gib)
	eq(t, "available", n.Memory.AvailableBytes, 5*gib)
	eq(t, "rss", n.Memory.RSSBytes, gib)
	eq(t, "page faults", n.Memory.PageFaults, 11)
	// No /proc/loadavg: processes are the numeric entries of /proc.
	if got := *n.Rlimit.NumOfRunningProcesses; got != 3 {
		t.Errorf("curproc = %d, want 3", got)
	}
}

// TestNodeProcOnly: without cgroups, CPU is /proc/stat's busy time and memory /proc/meminfo's.
func TestNodeProcOnly(t *testing.T) {
	f := hostV2()
	delete(f.files, "/sys/fs/cgroup/cpu.stat")
	delete(f.files, "/sys/fs/cgroup/memory.stat")
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	s, err := newNodeProvider(t, f, clk).Summary(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	// user 1000 + nice 50 + system 300 + irq 10 + softirq 5 + steal 2 ticks of 10ms.
	eq(t, "cpu time", s.Node.CPU.UsageCoreNanoSeconds, 1367*10_000_000)
	eq(t, "working set", s.Node.Memory.WorkingSetBytes, 11*gib) // 12 GiB - Inactive(file)
	eq(t, "rss", s.Node.Memory.RSSBytes, 3*gib)                 // AnonPages
}

func TestNodeErrors(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	f := hostV1()
	delete(f.files, "/proc/meminfo")
	if _, err := newNodeProvider(t, f, clk).Summary(context.Background(), true); err == nil {
		t.Error("Summary without /proc/meminfo succeeded")
	}
	// Optional figures are left out.
	f = hostV1()
	delete(f.files, "/proc/sys/kernel/pid_max")
	delete(f.files, "/proc/loadavg")
	f.statfs = nil
	s, err := newNodeProvider(t, f, clk).Summary(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Node.Fs != nil || s.Node.Rlimit.MaxPID != nil {
		t.Errorf("fs %v, maxpid %v: want both nil", s.Node.Fs, s.Node.Rlimit.MaxPID)
	}
}

// TestHostFS reads this Linux machine.
func TestHostFS(t *testing.T) {
	ctx := context.Background()
	f := HostFS{}
	cpu, err := hostCPU(ctx, f)
	if err != nil || cpu == 0 {
		t.Fatalf("hostCPU = %d, %v", cpu, err)
	}
	m, err := readHostMemory(ctx, f)
	if err != nil || m.total == 0 || m.workingSet == 0 || m.workingSet > m.usage {
		t.Fatalf("readHostMemory = %+v, %v", m, err)
	}
	maxPID, tasks, err := readRlimit(ctx, f)
	if err != nil || *maxPID < 300 || *tasks < 1 {
		t.Fatalf("readRlimit = %v, %v, %v", maxPID, tasks, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/f", make([]byte, 10000), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Statfs(ctx, dir)
	if err != nil || fi.CapacityBytes == 0 || fi.AvailableBytes > fi.CapacityBytes {
		t.Fatalf("Statfs = %+v, %v", fi, err)
	}
	b, n, err := f.DiskUsage(ctx, dir)
	if err != nil || n != 2 || b < 8192 {
		t.Fatalf("DiskUsage = %d bytes, %d inodes, %v; want a directory and a 10 kB file", b, n, err)
	}
	names, err := f.ReadDirNames(ctx, "/proc")
	if err != nil || len(names) == 0 {
		t.Fatalf("ReadDirNames(/proc) = %d names, %v", len(names), err)
	}
	boot, err := bootTime(ctx, f)
	if err != nil || boot.After(time.Now()) || boot.Year() < 2000 {
		t.Fatalf("bootTime = %v, %v", boot, err)
	}
}
