package sim

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSim10k: 10,000 pod lifecycles with the default faults and node
// crashes across 100 nodes (10 virtual minutes, then 6 quiet ones).
// Targets (printed, not enforced): wall time < 10 s on 2 cores, virtual
// time >= 100x wall time.
func BenchmarkSim10k(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as actorlet simulate runs
	for range b.N {
		opts := Options{Seed: 1, Nodes: 100, Pods: 10000, Duration: 10 * time.Minute, Faults: defaultPlan(b), CrashEvery: 100}
		s, err := New(opts)
		if err != nil {
			b.Fatal(err)
		}
		cpu0 := cpuTime()
		r, err := s.Run(context.Background())
		cpu := cpuTime() - cpu0
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		ratio := float64(r.Virtual) / float64(r.Wall)
		b.ReportMetric(r.Wall.Seconds(), "wall-s")
		b.ReportMetric(ratio, "virtual/wall")
		b.ReportMetric(float64(len(r.Violations)), "violations")
		b.ReportMetric(float64(r.Events), "events")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		var faults int64
		for _, v := range r.Faults {
			faults += v
		}
		fmt.Fprintf(os.Stdout, "\n| sim: %d pods, %d nodes, faults default, crash-every 100 | measured | target |\n|---|---|---|\n", r.Created, opts.Nodes)
		fmt.Fprintf(os.Stdout, "| wall time | %s | < 10 s (%s) |\n", r.Wall.Round(time.Millisecond), passMiss(r.Wall < 10*time.Second))
		fmt.Fprintf(os.Stdout, "| virtual/wall | %.0fx (%s virtual) | >= 100x (%s) |\n", ratio, r.Virtual, passMiss(ratio >= 100))
		fmt.Fprintf(os.Stdout, "| CPU time of the process (user+sys; the wall time depends on the machine's load) | %s (virtual/CPU %.0fx) | |\n", cpu.Round(time.Millisecond), float64(r.Virtual)/float64(cpu))
		fmt.Fprintf(os.Stdout, "| steps / events journaled / faults / node crashes | %d / %d / %d / %d | |\n", r.Steps, r.Events, faults, r.Faults["node-crash"])
		fmt.Fprintf(os.Stdout, "| violations | %d | 0 |\n", len(r.Violations))
		for _, v := range r.Violations {
			fmt.Fprintf(os.Stdout, "  %s\n", v)
		}
	}
}

// BenchmarkNodesPerGiB: the heap of 20 nodes with 100 pods each once their
// pods are running, per node, and so how many such nodes 1 GiB holds. The
// journals' bbolt files are memory-mapped besides (not heap): their size is
// shown too.
func BenchmarkNodesPerGiB(b *testing.B) {
	const nodes, podsPerNode = 20, 100
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := New(Options{Seed: 1, Nodes: nodes, Pods: nodes * podsPerNode, Duration: 5 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		end := Start.Add(5 * time.Minute)
		for s.Now().Before(end) && s.Step() {
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		var files int64
		for _, n := range s.Nodes() {
			if st, err := os.Stat(n.j.Path()); err == nil {
				files += st.Size()
			}
		}
		running := 0
		for _, n := range s.Nodes() {
			running += len(n.pods)
		}
		heap := int64(after.HeapInuse) - int64(before.HeapInuse)
		perNode := float64(heap) / nodes
		perNodeAll := perNode + float64(files)/nodes
		b.ReportMetric(perNode, "heap-bytes/node")
		b.ReportMetric(float64(1<<30)/perNodeAll, "nodes/GiB")
		fmt.Fprintf(os.Stdout, "\n| memory: %d nodes, %d pods with shells | measured |\n|---|---|\n", nodes, running)
		fmt.Fprintf(os.Stdout, "| heap per node | %.0f KiB |\n| journal file per node (mapped) | %.0f KiB |\n", perNode/1024, float64(files)/nodes/1024)
		fmt.Fprintf(os.Stdout, "| nodes in 1 GiB (heap + journal file) | %.0f |\n", float64(1<<30)/perNodeAll)
		runtime.KeepAlive(s)
		s.Close()
	}
}

// cpuTime is the user and system CPU time the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
