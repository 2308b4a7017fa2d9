package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri/faults"
)

func run(t *testing.T, opts Options) *Report {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func defaultPlan(t testing.TB) *faults.Plan {
	t.Helper()
	plan, err := faults.Preset("default")
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// Several fixed seeds with every kind of fault and node crashes: no
// violation, and each run twice gives the same digest.
func TestSeedsWithFaultsAreDeterministicAndClean(t *testing.T) {
	digests := map[string]uint64{}
	for _, seed := range []uint64{1, 2, 3} {
		opts := Options{Seed: seed, Nodes: 3, Pods: 60, Duration: 10 * time.Minute, Faults: defaultPlan(t), CrashEvery: 60}
		a, b := run(t, opts), run(t, opts)
		for _, v := range a.Violations {
			t.Errorf("seed %d: %s", seed, v)
		}
		if !a.Complete {
			t.Errorf("seed %d: the run stopped before its end", seed)
		}
		if a.Digest != b.Digest || a.Steps != b.Steps || a.Events != b.Events {
			t.Errorf("seed %d: two runs differ: digest %s / %s, steps %d / %d, events %d / %d", seed, a.Digest, b.Digest, a.Steps, b.Steps, a.Events, b.Events)
		}
		if a.Faults["node-crash"] == 0 || a.Faults[string(faults.KindError)] == 0 || a.Faults[string(faults.KindEventDrop)] == 0 {
			t.Errorf("seed %d: faults not injected as planned: %v", seed, a.Faults)
		}
		if a.Created != 60 || a.Events == 0 || a.Checks == 0 {
			t.Errorf("seed %d: created %d pods, journaled %d events, made %d checks", seed, a.Created, a.Events, a.Checks)
		}
		if prev, ok := digests[a.Digest]; ok {
			t.Errorf("seeds %d and %d gave the same digest", prev, seed)
		}
		digests[a.Digest] = seed
	}
}

// Without faults every pod converges too, and no fault is counted.
func TestNoFaults(t *testing.T) {
	r := run(t, Options{Seed: 9, Nodes: 2, Pods: 50, Duration: 5 * time.Minute})
	for _, v := range r.Violations {
		t.Error(v)
	}
	if len(r.Faults) != 0 {
		t.Errorf("faults injected without a plan: %v", r.Faults)
	}
}

// A deliberately injected bug (every StartContainer effect carried out
// twice) is caught by the checker, with the seed, node and step reported,
// and replaying that node alone up to that step reproduces it.
func TestInjectedDoubleStartIsCaughtAndReplays(t *testing.T) {
	opts := Options{Seed: 42, Nodes: 2, Pods: 20, Duration: 5 * time.Minute, Faults: defaultPlan(t), CrashEvery: 60}
	first := func(opts Options) (*Report, Violation, string) {
		t.Helper()
		s, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.bugDoubleStart = true
		r, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Violations) == 0 {
			t.Fatal("the injected double start was not caught")
		}
		v := r.Violations[0]
		for _, n := range s.Nodes() {
			if n.Name() == v.Node {
				return r, v, n.Digest()
			}
		}
		t.Fatalf("violation on unknown node %q", v.Node)
		return nil, v, ""
	}
	r, v, digest := first(opts)
	if !strings.Contains(v.What, "started a second time") {
		t.Errorf("caught as %q, want a second start", v.What)
	}
	var out strings.Builder
	r.Write(&out, "default")
	replay := r.ReplayCommand("default", v)
	for _, want := range []string{"VIOLATION seed=42 step", replay, "--node " + v.Node, "violations="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	opts.OnlyNode, opts.StopAtStep = v.Node, v.Step
	r2, v2, digest2 := first(opts)
	if v2 != v || digest2 != digest || len(r2.Violations) != 1 {
		t.Errorf("replay of %s to step %d gave %v (node digest %s, %d violations), want %v (node digest %s)", v.Node, v.Step, v2, digest2, len(r2.Violations), v, digest)
	}
}

// The number of goroutines Run uses, and stepping one event at a time with
// Step, change nothing in the run.
func TestParallelAndSteppedRunsAreTheSame(t *testing.T) {
	opts := Options{Seed: 5, Nodes: 4, Pods: 80, Duration: 5 * time.Minute, Faults: defaultPlan(t), CrashEvery: 50}
	opts.Parallel = 1
	one := run(t, opts)
	opts.Parallel = 3
	three := run(t, opts)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for s.Step() {
	}
	stepped := s.report(0)
	for _, r := range []*Report{three, stepped} {
		if r.Digest != one.Digest || r.Steps != one.Steps || r.Events != one.Events || r.Checks != one.Checks || len(r.Violations) != len(one.Violations) {
			t.Errorf("runs differ: digest %s / %s, steps %d / %d, events %d / %d, checks %d / %d", r.Digest, one.Digest, r.Steps, one.Steps, r.Events, one.Events, r.Checks, one.Checks)
		}
	}
	if !stepped.Complete || one.Steps == 0 {
		t.Errorf("stepped run complete=%v, %d steps", stepped.Complete, one.Steps)
	}
}

func TestOptionsErrors(t *testing.T) {
	if _, err := New(Options{Pods: -1}); err == nil || !strings.Contains(err.Error(), "pods") {
		t.Errorf("negative pods: %v", err)
	}
	bad := &faults.Plan{RPCs: map[string]faults.RPCFaults{"*": {Error: 2}}}
	if _, err := New(Options{Faults: bad}); err == nil || !strings.Contains(err.Error(), "fault plan") {
		t.Errorf("bad plan: %v", err)
	}
	if _, err := New(Options{Nodes: 2, OnlyNode: "sim-node-007"}); err == nil || !strings.Contains(err.Error(), "sim-node-007") {
		t.Errorf("unknown node: %v", err)
	}
}
