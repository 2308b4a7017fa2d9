package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Report is what a run did and found.
type Report struct {
	Options Options
	// Pods created; pods planned, by kind; edited and deleted.
	Created, Edited, Deleted int
	Kinds                    map[Kind]int
	// Faults injected, by kind (the fault plan's kinds, "restart/<mode>",
	// and "node-crash").
	Faults map[string]int64
	// Steps run (by all nodes: each node counts its own), invariant checks
	// made, events journaled, CRI calls made.
	Steps, Checks, Events, Calls uint64
	// RetriedStarts counts starts tried again after a reply was lost
	// (allowed: the node could not know the first took effect).
	RetriedStarts int
	// NewLives counts pods accepted again after their removal (see
	// checker.appended).
	NewLives int
	// RuntimeMisuse counts the CRI misuse the simulated runtimes recorded.
	RuntimeMisuse int
	Virtual, Wall time.Duration
	Digest        string
	Violations    []Violation
	// Notes are printed by Write before its last line (e.g. the outcome
	// of a determinism check).
	Notes []string
	// Complete: every node's run went to its end (no StopAtStep, no stop
	// at a violation), and the final convergence checks ran.
	Complete bool
}

func (s *Sim) report(wall time.Duration) *Report {
	r := &Report{
		Options: s.opts, Kinds: map[Kind]int{}, Faults: map[string]int64{},
		Wall: wall, Digest: s.Digest(), Complete: true,
	}
	var last time.Time
	for _, n := range s.nodes {
		if n.skipped() {
			continue
		}
		r.Created += n.created
		r.Edited += n.edited
		r.Deleted += n.deleted
		r.Steps += n.step
		r.Checks += n.check.checks
		r.Events += n.events
		r.RetriedStarts += n.check.benignRetries
		r.NewLives += n.check.newLives
		r.Violations = append(r.Violations, n.violations...)
		r.Complete = r.Complete && n.complete
		r.Calls += n.stats.calls
		r.RuntimeMisuse += n.rt.Info().ViolationCount
		for k, v := range n.faultCounts {
			r.Faults[k] += v
		}
		at := n.clock.Now()
		if n.complete {
			at = s.end()
		}
		if at.After(last) {
			last = at
		}
		for _, sp := range n.workload {
			r.Kinds[sp.kind]++
		}
	}
	r.Virtual = last.Sub(s.start)
	return r
}

// ReplayCommand is the command line that replays the run up to violation
// v: its node alone, up to its step (faults names the plan as it was
// given: a preset or a file).
func (r *Report) ReplayCommand(faults string, v Violation) string {
	o := r.Options
	return fmt.Sprintf("actorlet simulate --seed %d --nodes %d --pods %d --duration %s --quiet %s --faults %s --crash-every %d --node %s --stop-at-step %d",
		o.Seed, o.Nodes, o.Pods, o.Duration, o.Quiet, faults, o.CrashEvery, v.Node, v.Step)
}

// Write prints the report; its last line is "digest=<hex> violations=<n>".
func (r *Report) Write(w io.Writer, faults string) {
	o := r.Options
	fmt.Fprintf(w, "simulation: seed=%d nodes=%d pods=%d duration=%s quiet=%s faults=%s crash-every=%d\n",
		o.Seed, o.Nodes, o.Pods, o.Duration, o.Quiet, faults, o.CrashEvery)
	fmt.Fprintf(w, "pods run: %d (%s), edited %d, deleted %d\n", r.Created, kv(r.Kinds), r.Edited, r.Deleted)
	var total int64
	for _, v := range r.Faults {
		total += v
	}
	fmt.Fprintf(w, "faults injected: %d (%s)\n", total, kv(r.Faults))
	fmt.Fprintf(w, "invariant checks: %d over %d steps; %d events journaled, %d CRI calls; %d starts retried after a lost reply; %d pods accepted again after their removal; %d CRI misuse records\n",
		r.Checks, r.Steps, r.Events, r.Calls, r.RetriedStarts, r.NewLives, r.RuntimeMisuse)
	ratio := 0.0
	if r.Wall > 0 {
		ratio = float64(r.Virtual) / float64(r.Wall)
	}
	fmt.Fprintf(w, "virtual time: %s, wall time: %s (%.0fx)\n", r.Virtual, r.Wall.Round(time.Millisecond), ratio)
	if !r.Complete {
		fmt.Fprintf(w, "stopped at step %d (the final convergence checks did not run)\n", r.Steps)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "VIOLATION seed=%d %s\n  replay: %s\n", o.Seed, v, r.ReplayCommand(faults, v))
	}
	for _, note := range r.Notes {
		fmt.Fprintln(w, note)
	}
	fmt.Fprintf(w, "digest=%s violations=%d\n", r.Digest, len(r.Violations))
}

func kv[K ~string, V int | int64](m map[K]V) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
