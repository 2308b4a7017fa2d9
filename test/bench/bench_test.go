package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/podspec"
)

// Deadlines of the scenarios (2-core machine). A scenario that misses its
// deadline fails the benchmark.
const (
	runningDeadline  = 2 * time.Minute  // 1,000 pods to Running
	setup10kDeadline = 15 * time.Minute // 10,000 pods to Running, all batches
	recoverDeadline  = 5 * time.Minute  // agent.Start and 10,000 pods Running again
	stopDeadline     = 2 * time.Minute
	settleDeadline   = 30 * time.Second // live heap steady after pods are Running
)

// restartProfile, when set, is where BenchmarkRecover10k and
// BenchmarkRebuild10k write a CPU profile of their restarts only (from
// agent.Start until the agent stopped calling the runtime), without the
// setup that -test.cpuprofile would include (not with -test.cpuprofile).
var restartProfile = flag.String("restartprofile", "", "write a CPU profile of the 10k restarts (not their setup) to this file")

// heapProfile, when set, gets a heap profile of BenchmarkMemoryPerPod's
// agent with its 1,000 pods Running and settled, and FILE.idle one of the
// same agent idle before them: `go tool pprof -base FILE.idle FILE` shows
// what the pods hold.
var heapProfile = flag.String("heapprofile", "", "write a heap profile of the 1,000 settled pods of BenchmarkMemoryPerPod to this file")

// quietWindow is how long an agent must not have called the runtime to
// count as done with its work (BenchmarkRecover10k).
const quietWindow = time.Second

// settleInterval is the live heap's polling interval while it settles.
const settleInterval = 250 * time.Millisecond

// setupBatch is how many pods BenchmarkRecover10k's setup adds to the
// desired set at a time, waiting for them to be Running before adding more.
const setupBatch = 2000

// BenchmarkPodsToRunning measures how fast one agent brings 1,000 new pods
// (one container each, imagePullPolicy IfNotPresent, on an empty image
// store) to Running: from SetPods until the status cache holds all 1,000
// in phase Running with their container Running. One iteration is 1,000
// pods on a fresh runtime and a fresh journal (bbolt file, fsync on); only
// SetPods and the wait are timed. Reports pods/s; cri-calls/pod, the
// unary CRI calls made until all were Running (their split by method is
// logged); and cpu-µs/pod, the process's CPU time (user and system, all
// threads: the agent's, the in-process simulated runtime's, the transport
// between them) over the timed part per pod, which other jobs on the
// machine move less than the wall time; and fs-µs/inode, what creating one
// file cost on the root directory's filesystem just before (inodeCost).
func BenchmarkPodsToRunning(b *testing.B) {
	const n = 1000
	ctx := context.Background()
	b.StopTimer()
	calls, cpu, inode := 0, time.Duration(0), time.Duration(0)
	for range b.N {
		sn := newSimNode(b)
		root := b.TempDir()
		nd, err := sn.startAgent(ctx, root, nil)
		if err != nil {
			b.Fatal(err)
		}
		took, err := inodeCost(root)
		if err != nil {
			b.Fatal(err)
		}
		inode += took
		pods := benchPods(n)
		wctx, cancel := context.WithTimeout(ctx, runningDeadline)
		sn.calls.takeCounts()

		cpu0 := processCPU(b)
		b.StartTimer()
		nd.agent.SetPods(source, pods)
		err = nd.waitRunning(wctx, n)
		b.StopTimer()
		cpu += processCPU(b) - cpu0

		cancel()
		if err != nil {
			b.Fatal(err)
		}
		byMethod, total := sn.calls.takeCounts()
		calls += total
		b.Logf("%d pods Running; CRI calls until then: %v", n, byMethod)
		if _, err := nd.verifyRunning(pods); err != nil {
			b.Fatal(err)
		}
		sn.checkViolations(b)
		stopAgent(b, nd)
		sn.close()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(calls)/float64(n*b.N), "cri-calls/pod")
	b.ReportMetric(float64(cpu.Microseconds())/float64(n*b.N), "cpu-µs/pod")
	b.ReportMetric(float64(inode.Nanoseconds())/1e3/float64(b.N), "fs-µs/inode")
}

// inodeProbes is how many empty files inodeCost creates.
const inodeProbes = 200

// inodeCost creates inodeProbes empty files in a new directory under root
// (left there, removed with root) and returns the mean time per file: what
// creating an inode costs on root's filesystem right now. On an ext4
// without a journal it is not a constant of the machine: each allocation
// skips, one by one, the inodes freed in the same block group in the last
// one to six minutes (the kernel's recently_deleted), such as the 3,000 a
// previous run's clean-up freed. A pod costs three (its directory, the
// termination-message file, etc-hosts; five before 2026-12-07, with
// containers/ and containers/<name>/), so this figure says how much of a
// run's pods/s is the filesystem's state.
func inodeCost(root string) (time.Duration, error) {
	dir := filepath.Join(root, "inode-probe")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, err
	}
	start := time.Now()
	for i := range inodeProbes {
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			return 0, err
		}
		if err := f.Close(); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / inodeProbes, nil
}

// BenchmarkRecover10k measures an agent restart on a node running 10,000
// pods: agent.Start on the same root dir and runtime, which replays the
// journal, lists the runtime once and spawns 10,000 PodActors. Setup (not
// timed): the pods are brought to Running once, setupBatch at a time, and
// the agent is stopped (its pods keep running).
//
// Reports recover-ms, the wall time of agent.Start (target < 1,000 ms),
// and recovery-ms, the agent's own Agent.RecoveryTime. Start returns
// before the new actors have talked to the runtime, so it also reports,
// untimed: converge-ms, from Start until the agent's last CRI call of its
// recovery (no call for quietWindow afterwards) or until its status cache
// shows every pod Running again, whichever is later (the last CRI call
// can come before the actors are done: a rebuild journals its adoptions
// after the runtime was listed), cri-calls/pod, the
// unary CRI calls of the recovery and convergence per pod (their split by
// method is logged), and cpu-ms, the CPU time (user and system, all
// threads) the process used from Start until the agent was quiet: the
// agent's and the in-process simulated runtime's (the CRI server side).
// On a machine shared with other jobs it varies less than the wall times.
//
// After each restart it checks that all 10,000 pods are Running again with
// the same containers and no restart, and that the runtime still holds
// exactly one sandbox and one running container per pod.
func BenchmarkRecover10k(b *testing.B) { recover10k(b, false) }

// BenchmarkRebuild10k is BenchmarkRecover10k with the journal lost at each
// restart (journal.db deleted while the agent is stopped): every pod is
// rebuilt from the runtime, adopting its sandbox and container. The same
// checks hold: all Running again with the same containers, no restart, one
// sandbox and one running container per pod. converge-ms (Start until the
// last CRI call of the rebuild or every pod Running in the status cache,
// whichever is later) is the rebuild's time (target < 2,000 ms);
// cri-calls/pod counts the CRI calls it took.
func BenchmarkRebuild10k(b *testing.B) { recover10k(b, true) }

func recover10k(b *testing.B, loseJournal bool) {
	const n = 10000
	ctx := context.Background()
	b.StopTimer()
	sn := newSimNode(b)
	defer sn.close()
	root := b.TempDir()
	pods := benchPods(n)

	setupStart := time.Now()
	nd, err := sn.startAgent(ctx, root, nil)
	if err != nil {
		b.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, setup10kDeadline)
	defer cancel()
	for k := min(setupBatch, n); ; k = min(k+setupBatch, n) {
		nd.agent.SetPods(source, pods[:k])
		if err := nd.waitRunning(sctx, k); err != nil {
			b.Fatalf("setup, batch up to %d pods: %v", k, err)
		}
		if k == n {
			break
		}
	}
	// The agent keeps calling the runtime for a while after the last pod
	// is Running (its runtime watcher works off a backlog of events); Stop
	// cuts that short, and the journal already holds every pod's state.
	before, err := nd.verifyRunning(pods)
	if err != nil {
		b.Fatal(err)
	}
	st := nd.agent.Journal().Stats()
	_, setupCalls := sn.calls.takeCounts()
	b.Logf("setup: %d pods Running in %v (SetPods in batches of %d; journal: %d records in %d commits; %d CRI calls so far)",
		n, time.Since(setupStart).Round(time.Millisecond), setupBatch, st.Records, st.Commits, setupCalls)

	var recovery, converge, cpu time.Duration
	var calls int
	if *restartProfile != "" {
		// The restarts' loop only: stopping the agent and the checks
		// after each restart are in it, but they cost little.
		f, err := os.Create(*restartProfile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	for range b.N {
		t0 := time.Now()
		stopAgent(b, nd)
		b.Logf("stopped the agent in %v", time.Since(t0).Round(time.Millisecond))
		if loseJournal {
			if err := os.Remove(filepath.Join(root, "journal.db")); err != nil {
				b.Fatal(err)
			}
		}
		sn.calls.takeCounts()

		start, cpu0 := time.Now(), processCPU(b)
		b.StartTimer()
		nd, err = sn.startAgent(ctx, root, pods)
		b.StopTimer()
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		recovery += nd.agent.RecoveryTime()

		rctx, cancel := context.WithTimeout(ctx, recoverDeadline)
		err = nd.waitRunning(rctx, n)
		running := time.Since(start)
		var last time.Time
		if err == nil {
			last, err = sn.calls.waitQuiet(rctx, quietWindow)
		}
		cancel()
		if err != nil {
			b.Fatalf("after restart: %v", err)
		}
		converge += max(last.Sub(start), running)
		took1 := processCPU(b) - cpu0
		cpu += took1
		byMethod, total := sn.calls.takeCounts()
		calls += total
		b.Logf("restart: Start took %v (RecoveryTime %v); all Running in the status cache after %v; last CRI call after %v; process CPU %v; CRI calls: %v",
			took.Round(time.Millisecond), nd.agent.RecoveryTime().Round(time.Millisecond),
			running.Round(time.Millisecond), last.Sub(start).Round(time.Millisecond), took1.Round(time.Millisecond), byMethod)

		after, err := nd.verifyRunning(pods)
		if err != nil {
			b.Fatalf("after restart: %v", err)
		}
		for uid, c := range after {
			if was := before[uid]; c != was {
				b.Fatalf("pod %s: container %s with %d restarts after the agent restart, was %s with %d", uid, c.id, c.restarts, was.id, was.restarts)
			}
		}
		if info := sn.rt.Info(); info.Sandboxes != n || info.Containers != n || info.Running != n {
			b.Fatalf("after restart: runtime holds %d sandboxes, %d containers (%d running) for %d pods", info.Sandboxes, info.Containers, info.Running, n)
		}
	}
	stopAgent(b, nd)
	sn.checkViolations(b)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "recover-ms")
	b.ReportMetric(float64(recovery.Microseconds())/1e3/float64(b.N), "recovery-ms")
	b.ReportMetric(float64(converge.Microseconds())/1e3/float64(b.N), "converge-ms")
	b.ReportMetric(float64(calls)/float64(n*b.N), "cri-calls/pod")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms")
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMemoryPerPod measures the live heap per running pod: the heap
// (HeapAlloc after two GCs) with an agent started and no pods, and again
// once 1,000 pods are Running, divided by 1,000: bytes/pod.
//
// That figure includes the in-process simulated runtime's own state for
// each pod (its sandbox and container records, labels, annotations, the
// pod's IP), which a real runtime keeps in its own process. So the same
// 1,000 pods are also created in a fresh simulated runtime, with the CRI
// configs actorlet would send and without actorlet, through the same
// in-process connection as an agent's calls (sim.Direct, which hands the
// runtime copies), so that the runtime keeps copies as it does for the
// agent: bytes/pod-sim. bytes/pod-actorlet = bytes/pod - bytes/pod-sim is
// actorlet's own share (journal handle, actors and mailboxes, status
// cache, runtime watcher). The pod objects handed to SetPods are made
// before the first measurement: they belong to the pod source. The heap
// with pods is measured once it is steady (settledHeap). Target:
// bytes/pod-actorlet < 10 KiB.
func BenchmarkMemoryPerPod(b *testing.B) {
	const n = 1000
	if *heapProfile != "" {
		// Every allocation sampled: the profile attributes the heap exactly
		// (slower; the per-pod figures are the same).
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	// A first, unmeasured scenario makes the process's one-time
	// allocations (lazily built protobuf, gRPC and actor-system globals),
	// which would otherwise count as per-pod memory of the first run.
	heapPerPodWithAgent(b, 100)
	heapPerPodSimOnly(b, 100)
	var withAgent, simOnly float64
	for range b.N {
		withAgent += heapPerPodWithAgent(b, n)
		simOnly += heapPerPodSimOnly(b, n)
	}
	b.ReportMetric(withAgent/float64(b.N), "bytes/pod")
	b.ReportMetric(simOnly/float64(b.N), "bytes/pod-sim")
	b.ReportMetric((withAgent-simOnly)/float64(b.N), "bytes/pod-actorlet")
}

// heapPerPodWithAgent is the heap growth per pod from an idle agent to n
// Running pods, simulated runtime included.
func heapPerPodWithAgent(b *testing.B, n int) float64 {
	ctx := context.Background()
	sn := newSimNode(b)
	defer sn.close()
	nd, err := sn.startAgent(ctx, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer stopAgent(b, nd)
	pods := benchPods(n)

	heap0 := liveHeap()
	if *heapProfile != "" && n >= 1000 {
		writeHeapProfile(b, *heapProfile+".idle") // the base: pprof -base FILE.idle FILE
	}
	nd.agent.SetPods(source, pods)
	wctx, cancel := context.WithTimeout(ctx, runningDeadline)
	defer cancel()
	if err := nd.waitRunning(wctx, n); err != nil {
		b.Fatal(err)
	}
	atRunning := liveHeap()
	// Right after the last pod is Running, the runtime watcher still holds
	// a backlog of CRI events (several MB for 1,000 pods: each leads to a
	// listing of its pod) that it works off in the next seconds; the
	// steady state is measured once the node made no runtime call for
	// quietWindow and the heap is steady.
	sctx, cancel2 := context.WithTimeout(ctx, settleDeadline)
	defer cancel2()
	if _, err := sn.calls.waitQuiet(sctx, quietWindow); err != nil {
		b.Fatalf("the node kept calling the runtime after its pods were Running: %v", err)
	}
	heap1, err := settledHeap(sctx, heap0)
	if err != nil {
		b.Fatal(err)
	}
	if *heapProfile != "" && n >= 1000 {
		writeHeapProfile(b, *heapProfile)
	}
	runtime.KeepAlive(pods)
	if _, err := nd.verifyRunning(pods); err != nil {
		b.Fatal(err)
	}
	b.Logf("with agent: heap %d bytes idle, %d when all %d pods were Running (%d bytes/pod), %d settled (%d bytes/pod); %d goroutines",
		heap0, atRunning, n, (int64(atRunning)-int64(heap0))/int64(n), heap1, (int64(heap1)-int64(heap0))/int64(n), runtime.NumGoroutine())
	return (float64(heap1) - float64(heap0)) / float64(n)
}

// settledHeap polls the live heap every settleInterval until its growth
// over base changed by less than 1% in two polls in a row, and returns it.
func settledHeap(ctx context.Context, base uint64) (uint64, error) {
	tick := time.NewTicker(settleInterval)
	defer tick.Stop()
	prev, stable := liveHeap(), 0
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("live heap did not settle (last %d bytes, %d before the pods): %w", prev, base, ctx.Err())
		}
		cur := liveHeap()
		grown := math.Abs(float64(prev) - float64(base))
		if math.Abs(float64(cur)-float64(prev)) < 0.01*grown {
			stable++
		} else {
			stable = 0
		}
		prev = cur
		if stable == 2 {
			return cur, nil
		}
	}
}

// heapPerPodSimOnly is the heap growth per pod of a simulated runtime
// alone, running n pods created by direct calls with actorlet's configs.
func heapPerPodSimOnly(b *testing.B, n int) float64 {
	ctx := context.Background()
	sn := newSimNode(b)
	defer sn.close()
	pods := benchPods(n)
	opts := podspec.Options{}
	root := b.TempDir() // named as the agent's root dir is, so the paths the runtime keeps are as long

	heap0 := liveHeap()
	if _, err := sn.rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: benchImage}}); err != nil {
		b.Fatalf("pull %s: %v", benchImage, err)
	}
	for _, p := range pods {
		if err := runInSim(ctx, sn, p, opts, root); err != nil {
			b.Fatal(err)
		}
	}
	heap1 := liveHeap()
	runtime.KeepAlive(pods)
	if info := sn.rt.Info(); info.Running != n {
		b.Fatalf("simulated runtime runs %d containers, want %d", info.Running, n)
	}
	return (float64(heap1) - float64(heap0)) / float64(n)
}

// runInSim creates and starts pod's sandbox and containers in the simulated
// runtime, with the configs actorlet sends, through sn's connection.
// (Called without it, the runtime would keep the strings of the configs
// made here, partly shared with the pods made before the first
// measurement, where an agent's calls leave it copies: about 1.3 KB per
// pod more, which bytes/pod-actorlet would count as actorlet's.) As the
// agent's, the configs are of attempt 1, and each container's has the two
// mounts the agent gives every container, its termination-message file and
// the pod's /etc/hosts, made under root as the agent makes them under its
// root dir; without them the runtime's mount records and their paths
// (about 0.6 KB per pod; both figures are of before the runtime kept its
// records as plain values, 2026-12-07) counted as actorlet's.
func runInSim(ctx context.Context, sn *simNode, p *corev1.Pod, opts podspec.Options, root string) error {
	rt := runtimeapi.NewRuntimeServiceClient(sn.calls)
	const attempt = 1
	sbCfg := podspec.SandboxConfigBestEffort(p, attempt, opts)
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		return fmt.Errorf("pod %s: run sandbox: %w", p.UID, err)
	}
	sbStatus, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	if err != nil {
		return fmt.Errorf("pod %s: sandbox status: %w", p.UID, err)
	}
	podDir := filepath.Join(root, "pods", string(p.UID)) // volumes.Manager.PodDir's layout
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		cfg := podspec.LiteralContainerConfig(p, c, attempt)
		_, tm, err := podspec.TerminationMessageFile(podDir, p, c, attempt)
		if err != nil {
			return err
		}
		hosts, err := podspec.EtcHostsMount(podDir, p, c, sbStatus.GetStatus().GetNetwork().GetIp(), "", os.ReadFile)
		if err != nil {
			return err
		}
		cfg.Mounts = append(cfg.Mounts, tm)
		if hosts != nil {
			cfg.Mounts = append(cfg.Mounts, hosts)
		}
		cr, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cfg, SandboxConfig: sbCfg})
		if err != nil {
			return fmt.Errorf("pod %s: create container %s: %w", p.UID, c.Name, err)
		}
		if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.ContainerId}); err != nil {
			return fmt.Errorf("pod %s: start container %s: %w", p.UID, cr.ContainerId, err)
		}
	}
	return nil
}

// stopAgent stops the node's agent; its pods keep running in the runtime.
func stopAgent(b *testing.B, nd *node) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stopDeadline)
	defer cancel()
	if err := nd.agent.Stop(ctx); err != nil {
		b.Fatalf("stop agent: %v", err)
	}
}

// writeHeapProfile writes the live heap's profile to path.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
