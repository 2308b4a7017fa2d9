package faults

import (
	"math"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func ptr[T any](v T) *T { return &v }

// within fails unless got is within 5 standard deviations of a binomial
// count with n trials of probability p. The seeds are fixed, so this is
// not flaky: it fails only if the decisions are biased.
func within(t *testing.T, what string, got, n int, p float64) {
	t.Helper()
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	if math.Abs(float64(got)-mean) > 5*sd+1 {
		t.Errorf("%s: %d of %d, want %.0f ± %.0f", what, got, n, mean, 5*sd)
	}
}

func TestDecideCallIsAFunctionOfSeedMethodAndCount(t *testing.T) {
	p, _ := Preset("default")
	for n := uint64(0); n < 500; n++ {
		a := DecideCall(p, 42, "RunPodSandbox", n)
		if b := DecideCall(p, 42, "RunPodSandbox", n); a != b {
			t.Fatalf("call %d: %+v then %+v", n, a, b)
		}
	}
	// Another seed gives other faults.
	same := 0
	for n := uint64(0); n < 500; n++ {
		if DecideCall(p, 42, "RunPodSandbox", n) == DecideCall(p, 43, "RunPodSandbox", n) {
			same++
		}
	}
	if same > 10 {
		t.Errorf("seeds 42 and 43 agree on %d of 500 calls (latencies are continuous: they should hardly ever)", same)
	}
}

func TestDecideCallRates(t *testing.T) {
	p := &Plan{RPCs: map[string]RPCFaults{AnyMethod: {
		Error: 0.1, ErrorAfter: 0.05, Hang: 0.02, HangAfter: 0.03,
		Codes: []Code{Code(codes.Unavailable), Code(codes.Internal), Code(codes.DeadlineExceeded)},
	}}}
	const n = 20000
	got := map[Action]int{}
	byCode := map[codes.Code]int{}
	for i := range uint64(n) {
		c := DecideCall(p, 1, "StopContainer", i)
		got[c.Action]++
		if c.Action == FailBefore || c.Action == FailAfter {
			byCode[c.Code]++
		} else if c.Code != codes.OK {
			t.Fatalf("call %d: %v with code %v", i, c.Action, c.Code)
		}
		if c.Delay != 0 {
			t.Fatalf("call %d delayed %v without a latency", i, c.Delay)
		}
	}
	within(t, "error", got[FailBefore], n, 0.1)
	within(t, "errorAfter", got[FailAfter], n, 0.05)
	within(t, "hang", got[HangBefore], n, 0.02)
	within(t, "hangAfter", got[HangAfter], n, 0.03)
	failed := got[FailBefore] + got[FailAfter]
	for _, c := range []codes.Code{codes.Unavailable, codes.Internal, codes.DeadlineExceeded} {
		within(t, "code "+c.String(), byCode[c], failed, 1.0/3)
	}
}

func TestLatencyDistributions(t *testing.T) {
	const n = 20000
	sample := func(l Latency) []time.Duration {
		p := &Plan{RPCs: map[string]RPCFaults{"Version": {Latency: l}}}
		out := make([]time.Duration, 0, n)
		for i := range uint64(n) {
			out = append(out, DecideCall(p, 3, "Version", i).Delay)
		}
		slices.Sort(out)
		return out
	}
	mean := func(ds []time.Duration) float64 {
		var s float64
		for _, d := range ds {
			s += float64(d)
		}
		return s / float64(len(ds))
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*want {
			t.Errorf("%s: %v, want %v ± %.0f%%", what, time.Duration(got), time.Duration(want), tol*100)
		}
	}

	fixed := sample(Latency{Distribution: Fixed, Value: Duration(5 * time.Millisecond)})
	if fixed[0] != 5*time.Millisecond || fixed[n-1] != 5*time.Millisecond {
		t.Errorf("fixed: %v..%v", fixed[0], fixed[n-1])
	}

	uni := sample(Latency{Distribution: Uniform, Min: Duration(10 * time.Millisecond), Max: Duration(30 * time.Millisecond)})
	if uni[0] < 10*time.Millisecond || uni[n-1] > 30*time.Millisecond {
		t.Errorf("uniform out of [10ms, 30ms]: %v..%v", uni[0], uni[n-1])
	}
	near("uniform mean", mean(uni), float64(20*time.Millisecond), 0.02)

	exp := sample(Latency{Distribution: Exponential, Mean: Duration(8 * time.Millisecond)})
	near("exponential mean", mean(exp), float64(8*time.Millisecond), 0.05)

	logn := sample(Latency{Distribution: LogNormal, Median: Duration(4 * time.Millisecond), Sigma: 0.5})
	near("lognormal median", float64(logn[n/2]), float64(4*time.Millisecond), 0.05)
	// exp(0.5 * 1.2816) is the 90th percentile's ratio to the median.
	near("lognormal p90", float64(logn[n*9/10]), float64(4*time.Millisecond)*math.Exp(0.5*1.2816), 0.05)

	capped := sample(Latency{Distribution: LogNormal, Median: Duration(time.Millisecond), Sigma: 2, Max: Duration(3 * time.Millisecond)})
	if capped[n-1] != 3*time.Millisecond {
		t.Errorf("lognormal capped at 3ms reached %v", capped[n-1])
	}

	some := sample(Latency{Rate: ptr(0.25), Distribution: Fixed, Value: Duration(time.Millisecond)})
	delayed := n - slices.Index(some, time.Millisecond)
	within(t, "latency rate", delayed, n, 0.25)
}

func TestDecideEventAndRestartRates(t *testing.T) {
	e := EventFaults{Drop: 0.05, Duplicate: 0.1, Reorder: 0.15, Break: 0.01}
	const n = 20000
	got := map[EventAction]int{}
	for k := range uint64(n) {
		got[DecideEvent(e, 9, k%4, k/4)]++
	}
	within(t, "drop", got[Drop], n, 0.05)
	within(t, "duplicate", got[Duplicate], n, 0.1)
	within(t, "reorder", got[Reorder], n, 0.15)
	within(t, "break", got[Break], n, 0.01)
	if DecideEvent(e, 9, 2, 17) != DecideEvent(e, 9, 2, 17) {
		t.Fatal("DecideEvent is not a function of its arguments")
	}

	restarts := 0
	for i := range uint64(n) {
		if DecideRestart(Restart{Rate: 0.01}, 9, i) {
			restarts++
		}
	}
	within(t, "restart", restarts, n, 0.01)
	if DecideRestart(Restart{}, 9, 0) {
		t.Fatal("restart with rate 0")
	}
	for n := range uint64(10) {
		if got := DecideRestart(Restart{AtCalls: []uint64{3, 7}}, 9, n); got != (n == 3 || n == 7) {
			t.Fatalf("restart at calls 3 and 7: call %d restarts: %v", n, got)
		}
	}
}

func TestSubSeed(t *testing.T) {
	a, b := SubSeed(1, "node-1"), SubSeed(1, "node-2")
	if a == b || a != SubSeed(1, "node-1") || a == SubSeed(2, "node-1") {
		t.Fatalf("SubSeed: %d %d", a, b)
	}
}
