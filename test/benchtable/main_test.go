package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/actorlet/actorlet/journal
cpu: Intel(R) Xeon(R) Processor
BenchmarkAppend/pods=100-2         	   10000	     10417 ns/op	     96000 records/s	        43.5 records/commit
BenchmarkAppend/pods=1000-2        	   10000	      3000 ns/op	    280000 records/s
BenchmarkRefBatch/pods=100-2       	   10000	    117647 ns/op	      8500 records/s
BenchmarkRefBatch/pods=1000-2      	   10000	     30000 ns/op	     33000 records/s
BenchmarkRefGroupCommit/pods=100-2 	   10000	     10000 ns/op	    100000 records/s
BenchmarkRefGroupCommit/pods=1000-2	   10000	      3000 ns/op	    300000 records/s
BenchmarkLoadAll10k-2              	       3	 400000000 ns/op	    250000 records/s
PASS
ok  	github.com/actorlet/actorlet/journal	12.3s
goos: linux
pkg: github.com/actorlet/actorlet/test/bench
BenchmarkPodsToRunning
BenchmarkPodsToRunning-2   	       1	 763934190 ns/op	      1309 pods/s
BenchmarkRecover10k
    bench_test.go:113: setup: 10000 pods Running in 34.611s
BenchmarkRecover10k-2      	       1	 812000000 ns/op	       812.0 recover-ms	       790.0 recovery-ms
BenchmarkMemoryPerPod-2    	       1	2880278669 ns/op	     20658 bytes/pod	     17626 bytes/pod-actorlet	      3032 bytes/pod-sim
BenchmarkMemoryPerPod-2    	       1	2880278669 ns/op	     18658 bytes/pod	     15626 bytes/pod-actorlet	      3032 bytes/pod-sim
PASS
ok  	github.com/actorlet/actorlet/test/bench	40.1s
`

func TestParseAndRender(t *testing.T) {
	var pass bytes.Buffer
	res, err := parse(strings.NewReader(sample), &pass)
	if err != nil {
		t.Fatal(err)
	}
	if pass.String() != sample {
		t.Errorf("input not passed through unchanged:\n%s", pass.String())
	}
	if res.failed != "" {
		t.Errorf("run reported as failed: %q", res.failed)
	}
	if got, want := len(res.benchmarks), 10; got != want {
		t.Fatalf("%d benchmarks, want %d", got, want)
	}
	if v, ok := value(res, "bench/MemoryPerPod", "bytes/pod-actorlet"); !ok || v != 16626 {
		t.Errorf("bytes/pod-actorlet = %v, %v; want the mean of two runs, 16626", v, ok)
	}
	if b := res.get("journal/Append/pods=100"); b == nil || b.runs != 1 {
		t.Fatalf("journal/Append/pods=100: %+v", b)
	}

	var out bytes.Buffer
	passed, missed := render(&out, res)
	table := out.String()
	// pods=100: 96% of group commit (PASS), pods=1000: 93.3% (PASS);
	// 1,309 pods/s (MISS); recovery 812 ms (PASS); 16,626 and 19,658
	// bytes/pod (MISS twice).
	if passed != 3 || missed != 3 {
		t.Errorf("%d PASS, %d MISS; want 3 and 3:\n%s", passed, missed, table)
	}
	for _, want := range []string{
		`(?m)^bench/PodsToRunning\s+1\s+1,309\s+pods/s$`,
		`(?m)^\s+790\s+recovery-ms$`,
		`(?m)^journal/LoadAll10k\s+1\s+250,000\s+records/s$`,
		`(?m)^\s*pods=100\s+96,000\s+100,000\s+8,500\s+0\.96\s+11\.29\s*$`,
		`(?m)^journal ≥ 90% of group commit, pods=1000\s+93\.3%\s+≥ 90%\s+PASS$`,
		`(?m)^recovery of 10,000 pods \(recover-ms\)\s+812 ms\s+< 1,000 ms\s+PASS$`,
		`(?m)^heap per running pod, actorlet \(bytes/pod-actorlet\)\s+16,626 B\s+≤ 5,120 B\s+MISS$`,
		`(?m)^1,000 static pods to Running \(pods/s\)\s+1,309 pods/s\s+≥ 2,004 pods/s\s+MISS$`,
	} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("table does not match %s:\n%s", want, table)
		}
	}
	if strings.Contains(table, "ns/op") {
		t.Errorf("ns/op shown for benchmarks with custom metrics:\n%s", table)
	}
}

func TestMissingBenchmarksAreNotMeasured(t *testing.T) {
	in := "pkg: github.com/actorlet/actorlet/test/bench\nBenchmarkPodsToRunning-2 \t 1\t 100 ns/op\t 1309 pods/s\n"
	res, err := parse(strings.NewReader(in), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if p, m := render(&out, res); p != 0 || m != 1 {
		t.Errorf("%d PASS, %d MISS with only the startup target's benchmark", p, m)
	}
	if !strings.Contains(out.String(), "0 PASS, 1 MISS, 5 not measured") {
		t.Errorf("summary:\n%s", out.String())
	}
}

func TestFailedRun(t *testing.T) {
	for _, in := range []string{
		"BenchmarkRecover10k\n    bench_test.go:153: stop agent: timeout\n--- FAIL: BenchmarkRecover10k\nFAIL\n",
		"panic: runtime error: index out of range\n",
	} {
		res, err := parse(strings.NewReader(in), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if res.failed == "" {
			t.Errorf("failure not seen in %q", in)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0.5: "0.5", 42: "42", 812.4: "812", 1309: "1,309", 1234567.8: "1,234,568", -2500: "-2,500"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}
