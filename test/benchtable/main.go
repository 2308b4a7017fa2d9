// Command benchtable turns `go test -bench` output into a readable table.
//
//	go test -run '^$' -bench . -benchtime=1x ./test/bench/ | go run ./test/benchtable
//
// It copies every input line to stderr as it reads it, then prints to
// stdout: each benchmark's custom metrics (b.ReportMetric; ns/op only for
// benchmarks without any), the journal's records/s against its two bbolt
// references per pods=N, and actorlet's targets with PASS or MISS:
//
//   - the journal reaches ≥ 90% of the group-commit reference's records/s
//     (journal.BenchmarkAppend vs BenchmarkRefGroupCommit, each pods=N);
//   - an agent recovers 10,000 pods in < 1 s (bench.BenchmarkRecover10k,
//     recover-ms);
//   - a running pod costs ≤ 5 KiB of heap (bench.BenchmarkMemoryPerPod,
//     bytes/pod-actorlet; bytes/pod, which includes the simulated runtime,
//     is shown against the same bound for information);
//   - 1,000 static pods reach Running at ≥ 2,004 pods/s
//     (bench.BenchmarkPodsToRunning, pods/s: the figure of 2026-12-02 that
//     issue 15 asks to get back to).
//
// Targets are printed, never enforced: a benchmark is not a test. The exit
// status is 1 only when the run itself failed (a FAIL or panic line in the
// input) or the input holds no benchmark result, so that a pipeline can
// still notice a broken run.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

func main() {
	res, err := parse(os.Stdin, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	render(os.Stdout, res)
	switch {
	case res.failed != "":
		fmt.Fprintf(os.Stderr, "benchtable: the benchmark run failed: %s\n", res.failed)
		os.Exit(1)
	case len(res.benchmarks) == 0:
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark results in the input")
		os.Exit(1)
	}
}

// metric is one value a benchmark reported, averaged over the runs that
// reported it (-count).
type metric struct {
	unit string
	sum  float64
	runs int
}

func (m *metric) value() float64 { return m.sum / float64(m.runs) }

// benchmark is the results of one benchmark (all runs of it).
type benchmark struct {
	// name is the package's last path element and the benchmark's name
	// without "Benchmark" and the GOMAXPROCS suffix: "journal/Append/pods=100".
	name    string
	runs    int
	metrics []*metric // in the order first reported
}

func (b *benchmark) metric(unit string) (float64, bool) {
	for _, m := range b.metrics {
		if m.unit == unit {
			return m.value(), true
		}
	}
	return 0, false
}

// results are the benchmarks of one input, in the order first seen.
type results struct {
	benchmarks []*benchmark
	byName     map[string]*benchmark
	// failed is the first line showing that the run failed ("" if none).
	failed string
}

func (r *results) get(name string) *benchmark { return r.byName[name] }

// resultLine is a benchmark result: name, optional -GOMAXPROCS suffix,
// iterations, then value-unit pairs.
var resultLine = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)

// parse reads go test output from r, copying every line to pass as it is
// read.
func parse(r io.Reader, pass io.Writer) (*results, error) {
	res := &results{byName: map[string]*benchmark{}}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(pass, line)
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = path.Base(strings.TrimSpace(strings.TrimPrefix(line, "pkg: ")))
			continue
		case res.failed == "" && (strings.HasPrefix(trimmed, "FAIL") || strings.HasPrefix(trimmed, "--- FAIL") || strings.HasPrefix(line, "panic: ")):
			res.failed = trimmed
			continue
		}
		m := resultLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[3])
		if len(fields)%2 != 0 {
			continue // not a result line after all (a log line starting with "Benchmark")
		}
		name := m[1]
		if pkg != "" {
			name = pkg + "/" + name
		}
		b := res.byName[name]
		if b == nil {
			b = &benchmark{name: name}
			res.byName[name] = b
			res.benchmarks = append(res.benchmarks, b)
		}
		b.runs++
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			unit := fields[i+1]
			k := slices.IndexFunc(b.metrics, func(m *metric) bool { return m.unit == unit })
			if k < 0 {
				b.metrics = append(b.metrics, &metric{unit: unit})
				k = len(b.metrics) - 1
			}
			b.metrics[k].sum += v
			b.metrics[k].runs++
		}
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("read benchmark output: %w", err)
	}
	return res, nil
}

// standardUnits are the testing package's own metrics.
var standardUnits = map[string]bool{"ns/op": true, "B/op": true, "allocs/op": true, "MB/s": true}

// Targets.
const (
	journalTarget  = 0.90   // journal records/s ÷ group-commit reference's
	recoverTarget  = 1000.0 // ms to recover 10,000 pods
	memoryTarget   = 5120   // bytes of heap per running pod, at most
	startupTarget  = 2004.0 // pods/s to Running, at least
	startupBench   = benchPkg + "/PodsToRunning"
	journalPkg     = "journal"
	benchPkg       = "bench"
	recoverBench   = benchPkg + "/Recover10k"
	rebuildBench   = benchPkg + "/Rebuild10k"
	rebuildTarget  = 2000.0 // ms to rebuild 10,000 running pods with no journal
	memoryBench    = benchPkg + "/MemoryPerPod"
	journalAppend  = journalPkg + "/Append/"
	journalRefGC   = journalPkg + "/RefGroupCommit/"
	journalRefBolt = journalPkg + "/RefBatch/"
)

// render prints the tables and returns the number of targets passed and
// missed.
func render(w io.Writer, res *results) (pass, miss int) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "BENCHMARK\tRUNS\t%12s\tUNIT\n", "VALUE")
	for _, b := range res.benchmarks {
		first := true
		for _, m := range b.metrics {
			if standardUnits[m.unit] && (m.unit != "ns/op" || hasCustom(b)) {
				continue
			}
			name, runs := "", ""
			if first {
				name, runs = b.name, strconv.Itoa(b.runs)
				first = false
			}
			fmt.Fprintf(tw, "%s\t%4s\t%12s\t%s\n", name, runs, num(m.value()), m.unit)
		}
	}
	_ = tw.Flush()

	var targets [][4]string // what, measured, target, result
	add := func(what, measured, target string, ok, known bool) {
		result := "n/a"
		switch {
		case !known:
			measured = "-"
		case ok:
			result = "PASS"
			pass++
		default:
			result = "MISS"
			miss++
		}
		targets = append(targets, [4]string{what, measured, target, result})
	}

	if ns := journalSizes(res); len(ns) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "JOURNAL records/s\t%12s\t%16s\t%12s\t%20s\t%16s\n", "journal", "group-commit ref", "DB.Batch ref", "journal/group-commit", "journal/DB.Batch")
		for _, n := range ns {
			j, jok := recordsPerSec(res, journalAppend+n)
			gc, gcok := recordsPerSec(res, journalRefGC+n)
			bb, bbok := recordsPerSec(res, journalRefBolt+n)
			fmt.Fprintf(tw, "%s\t%12s\t%16s\t%12s\t%20s\t%16s\n", n, opt(num(j), jok), opt(num(gc), gcok), opt(num(bb), bbok),
				opt(ratio(j, gc), jok && gcok), opt(ratio(j, bb), jok && bbok))
			add("journal ≥ 90% of group commit, "+n, opt(fmt.Sprintf("%.1f%%", 100*j/gc), jok && gcok),
				fmt.Sprintf("≥ %.0f%%", 100*journalTarget), jok && gcok && j >= journalTarget*gc, jok && gcok)
		}
		_ = tw.Flush()
	} else {
		add("journal ≥ 90% of group commit", "", fmt.Sprintf("≥ %.0f%%", 100*journalTarget), false, false)
	}

	v, ok := value(res, startupBench, "pods/s")
	add("1,000 static pods to Running (pods/s)", fmt.Sprintf("%s pods/s", num(v)), fmt.Sprintf("≥ %s pods/s", num(startupTarget)), v >= startupTarget, ok)
	v, ok = value(res, recoverBench, "recover-ms")
	add("recovery of 10,000 pods (recover-ms)", fmt.Sprintf("%s ms", num(v)), fmt.Sprintf("< %s ms", num(recoverTarget)), v < recoverTarget, ok)
	v, ok = value(res, rebuildBench, "converge-ms")
	add("rebuild of 10,000 running pods, no journal (converge-ms)", fmt.Sprintf("%s ms", num(v)), fmt.Sprintf("< %s ms", num(rebuildTarget)), v < rebuildTarget, ok)
	v, ok = value(res, memoryBench, "bytes/pod-actorlet")
	add("heap per running pod, actorlet (bytes/pod-actorlet)", fmt.Sprintf("%s B", num(v)), fmt.Sprintf("≤ %s B", num(memoryTarget)), v <= memoryTarget, ok)
	v, ok = value(res, memoryBench, "bytes/pod")
	add("  incl. the simulated runtime (bytes/pod)", fmt.Sprintf("%s B", num(v)), fmt.Sprintf("≤ %s B", num(memoryTarget)), v <= memoryTarget, ok)

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tMEASURED\tTARGET\tRESULT")
	for _, t := range targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t[0], t[1], t[2], t[3])
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%d PASS, %d MISS, %d not measured (targets are reported, not enforced)\n", pass, miss, len(targets)-pass-miss)
	return pass, miss
}

func hasCustom(b *benchmark) bool {
	return slices.ContainsFunc(b.metrics, func(m *metric) bool { return !standardUnits[m.unit] })
}

// journalSizes returns the "pods=N" sub-benchmark names seen under the
// journal's three benchmarks, by N.
func journalSizes(res *results) []string {
	seen := map[string]int{}
	for _, b := range res.benchmarks {
		for _, prefix := range []string{journalAppend, journalRefGC, journalRefBolt} {
			if sub, ok := strings.CutPrefix(b.name, prefix); ok {
				n, _ := strconv.Atoi(strings.TrimPrefix(sub, "pods="))
				seen[sub] = n
			}
		}
	}
	subs := make([]string, 0, len(seen))
	for s := range seen {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, b string) int { return seen[a] - seen[b] })
	return subs
}

func recordsPerSec(res *results, name string) (float64, bool) {
	return value(res, name, "records/s")
}

func value(res *results, name, unit string) (float64, bool) {
	b := res.get(name)
	if b == nil {
		return 0, false
	}
	return b.metric(unit)
}

func opt(s string, ok bool) string {
	if !ok {
		return "-"
	}
	return s
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// num formats v with thousands separators when it is large and three
// significant digits when it is small.
func num(v float64) string {
	if math.Abs(v) < 100 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
