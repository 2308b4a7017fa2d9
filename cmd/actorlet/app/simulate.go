package app

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/sim"
)

// errViolations is the error of a simulation that found violations.
var errViolations = errors.New("the simulation found invariant violations")

func newSimulateCommand() *cobra.Command {
	var (
		opts       sim.Options
		plan       string
		crashEvery int
		determ     bool
	)
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run many simulated nodes on a virtual clock, deterministically, with faults, and check invariants",
		Long: `Run many actorlet nodes in one process on a virtual clock, each with its own simulated
runtime and journal, a seeded workload (steady, crash-looping, jobs, init containers, sidecars,
edits, graceful deletions) and seeded faults (the --faults plan on every runtime, plus node
crashes: a kill -9 right after a journal append, then recovery from the journal). An invariant
checker runs at every step. Each node runs on its own virtual clock, in an order drawn from
--seed; nodes share nothing, so they run side by side (--parallel) without changing any run:
the same seed and binary give the same run and the same digest.

The report ends with the line "digest=<hex> violations=<n>"; the digest covers every event
every node journaled. A violation prints the seed, the node, its step and a command that
replays that node up to it (--node, --stop-at-step), and the command exits non-zero. See README, "Simulation", for what runs and
what is simulated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := faults.Load(plan)
			if err != nil {
				return fmt.Errorf("--faults: %w", err)
			}
			opts.Faults = p
			opts.CrashEvery = crashEvery
			if !cmd.Flags().Changed("crash-every") && p.Empty() {
				opts.CrashEvery = 0
			}
			switch {
			case opts.Nodes <= 0:
				return fmt.Errorf("--nodes %d: want at least 1", opts.Nodes)
			case opts.Pods < 0:
				return fmt.Errorf("--pods %d: want 0 or more", opts.Pods)
			case opts.Duration <= 0:
				return fmt.Errorf("--duration %s: want a positive virtual duration", opts.Duration)
			case opts.CrashEvery < 0:
				return fmt.Errorf("--crash-every %d: want 0 (no crashes) or more", opts.CrashEvery)
			case opts.Parallel < 0:
				return fmt.Errorf("--parallel %d: want 0 (the number of CPUs) or more", opts.Parallel)
			}
			// A batch run that allocates a lot and keeps little: fewer GC
			// cycles for some more memory.
			debug.SetGCPercent(400)
			r, err := simulateOnce(cmd, opts)
			if err != nil {
				return err
			}
			if determ {
				r2, err := simulateOnce(cmd, opts)
				if err != nil {
					return err
				}
				if r2.Digest != r.Digest || r2.Steps != r.Steps || r2.Events != r.Events || len(r2.Violations) != len(r.Violations) {
					r.Write(cmd.OutOrStdout(), plan)
					return fmt.Errorf("not deterministic: the second run gave digest=%s steps=%d events=%d violations=%d, the first digest=%s steps=%d events=%d violations=%d",
						r2.Digest, r2.Steps, r2.Events, len(r2.Violations), r.Digest, r.Steps, r.Events, len(r.Violations))
				}
				r.Notes = append(r.Notes, fmt.Sprintf("determinism: a second run gave the same digest, %d steps and %d events (wall time %s)", r2.Steps, r2.Events, r2.Wall.Round(time.Millisecond)))
			}
			r.Write(cmd.OutOrStdout(), plan)
			if len(r.Violations) > 0 {
				return fmt.Errorf("%w: %d (seed %d)", errViolations, len(r.Violations), opts.Seed)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.Uint64Var(&opts.Seed, "seed", 1, "the seed every random choice of the run is drawn from")
	fs.IntVar(&opts.Nodes, "nodes", 10, "the number of simulated nodes")
	fs.IntVar(&opts.Pods, "pods", 200, "the number of pods the workload creates (spread over the nodes)")
	fs.DurationVar(&opts.Duration, "duration", 10*time.Minute, "virtual time of the workload and the faults")
	fs.DurationVar(&opts.Quiet, "quiet", 6*time.Minute, "virtual time after --duration without faults or changes, after which every pod must have converged")
	fs.StringVar(&plan, "faults", "default", "the runtime fault plan of every node: default, none, or a YAML/JSON plan file (see README, \"Faults\")")
	fs.IntVar(&crashEvery, "crash-every", 100, "mean journal appends of a node between two crashes (kill -9 and recovery); 0: none (default 0 with --faults none)")
	fs.BoolVar(&determ, "check-determinism", false, "run twice and fail on any difference")
	fs.Uint64Var(&opts.StopAtStep, "stop-at-step", 0, "stop each node after its own step N (with --node: replays a node up to a reported violation)")
	fs.StringVar(&opts.OnlyNode, "node", "", "run only this node (sim-node-NNN), as it runs among the others (replays)")
	fs.IntVar(&opts.Parallel, "parallel", 0, "nodes run at a time (default: the number of CPUs); changes the wall time only")
	fs.StringVar(&opts.Dir, "dir", "", "keep the nodes' journals in this directory (default: a temporary one, removed)")
	return cmd
}

func simulateOnce(cmd *cobra.Command, opts sim.Options) (*sim.Report, error) {
	if opts.Dir != "" {
		opts.Dir = fmt.Sprintf("%s/run-%d", opts.Dir, time.Now().UnixNano())
	}
	s, err := sim.New(opts)
	if err != nil {
		return nil, err
	}
	r, err := s.Run(cmd.Context())
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return r, err
}
