package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/node/agent"
)

// Options configure a simulation. Only Seed, Nodes, Pods and Duration
// matter to most runs; zero values take the defaults named.
type Options struct {
	// Seed decides everything random: the workload, the faults, the order
	// of events due at the same instant, the crash points.
	Seed uint64
	// Nodes is the number of simulated nodes (default 1).
	Nodes int
	// Pods is the number of pods the workload creates over the run.
	Pods int
	// Duration is the virtual time of the workload and the faults
	// (default 10m). Pods are created, edited and deleted in its first
	// 80%.
	Duration time.Duration
	// Quiet is the virtual time after Duration without faults, crashes or
	// workload changes, after which every pod must have converged
	// (default 6m: above the core's longest back-off, 5m).
	Quiet time.Duration
	// Faults is the runtime fault plan of every node (each node decides
	// from its own seed, faults.SubSeed(Seed, node name)); nil or empty
	// injects none.
	Faults *faults.Plan
	// CrashEvery is the mean number of journal appends of a node between
	// two of its crashes (kill -9 right after an append, then recovery);
	// 0 crashes no node.
	CrashEvery int
	// RuntimeTimeout is the CRI call deadline a hung call takes up in
	// virtual time (default 2m, the kubelet's --runtime-request-timeout).
	RuntimeTimeout time.Duration
	// Dir holds the nodes' journals (default: a new temporary directory,
	// removed by Close).
	Dir string
	// StopAtStep, when non-zero, ends each node's run after its own step
	// StopAtStep (with OnlyNode, to replay a run up to a reported
	// violation).
	StopAtStep uint64
	// OnlyNode, when set, runs only the node of that name (sim-node-NNN):
	// nodes are independent, so it runs as it does among all of them (the
	// workload is planned the same). Replays use it.
	OnlyNode string
	// KeepGoing does not stop a node at its first violation.
	KeepGoing bool
	// Parallel is the number of goroutines Run runs nodes on (default
	// GOMAXPROCS). It changes the wall time only, never the run.
	Parallel int
	// Node are options of every node's parts, as a real node takes them
	// (package node/agent; see agent.PodDeps): the core's parameters
	// (WithLifecycle), the pod-spec conversion (WithPodConfig), the host IP,
	// what pods read from a cluster (WithEnvSource, WithServices), and the
	// containers' lifecycle handlers (the hooks of WithProbes, which must
	// decide from their inputs alone to keep a run reproducible). The
	// parts the simulation's shell does not drive are refused, by name:
	// admission, lifecycle hooks, probes, volumes. The simulation's own
	// runtime, clock, node names and directories always win.
	Node []agent.Option
}

// notDriven refuses the parts of deps the simulation's shell does not
// drive (see Options.Node).
func notDriven(deps *actors.Deps) error {
	var parts []string
	if deps.Admission != nil {
		parts = append(parts, "admission (WithAdmitHandler)")
	}
	if len(deps.LifecycleHooks) > 0 {
		parts = append(parts, "lifecycle hooks (WithLifecycleHook)")
	}
	if deps.Probers != nil {
		parts = append(parts, "probes (WithProbes' probers: give nil)")
	}
	if deps.Volumes != nil {
		parts = append(parts, "volumes (WithVolumes)")
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("sim: the simulation does not drive %s", strings.Join(parts, ", "))
}

// Sim is a deterministic simulation of many actorlet nodes, each on its own
// virtual clock (see the package doc). Nodes share nothing while they run:
// each has its own runtime, journal, clock, random sources, checker and
// digest, and its share of the workload is planned before the run. So Run
// runs them side by side on Options.Parallel goroutines, and the outcome
// (every node's steps, events and digest) does not depend on how many.
type Sim struct {
	opts   Options
	dir    string
	ownDir bool
	rand   *rand.Rand
	start  time.Time
	nodes  []*Node
	now    time.Time // of the last Step

	pods       []*simPod
	kindCounts map[Kind]int

	// bugDoubleStart is the injected bug of the tests: every
	// StartContainer effect is carried out twice.
	bugDoubleStart bool
	// trace, when set (tests), is told what happens to pods; the nodes
	// then run one after the other.
	trace func(n *Node, uid, what string)
}

// Start is the virtual time every run starts at.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New builds the nodes (runtimes, journals) and plans the workload.
// Nothing runs before Run or Step.
func New(opts Options) (*Sim, error) {
	if opts.Nodes <= 0 {
		opts.Nodes = 1
	}
	if opts.Pods < 0 {
		return nil, fmt.Errorf("sim: pods %d is negative", opts.Pods)
	}
	if opts.Duration <= 0 {
		opts.Duration = 10 * time.Minute
	}
	if opts.Quiet <= 0 {
		opts.Quiet = 6 * time.Minute
	}
	if opts.RuntimeTimeout <= 0 {
		opts.RuntimeTimeout = 2 * time.Minute
	}
	if opts.CrashEvery < 0 {
		return nil, fmt.Errorf("sim: crash-every %d is negative", opts.CrashEvery)
	}
	if opts.Parallel < 0 {
		return nil, fmt.Errorf("sim: parallel %d is negative", opts.Parallel)
	}
	if opts.Faults != nil {
		if err := opts.Faults.Validate(); err != nil {
			return nil, fmt.Errorf("sim: fault plan: %w", err)
		}
		if opts.Faults.Empty() {
			opts.Faults = nil
		}
	}
	s := &Sim{
		opts:       opts,
		rand:       rand.New(rand.NewPCG(opts.Seed, faults.SubSeed(opts.Seed, "sim"))),
		start:      Start,
		now:        Start,
		kindCounts: map[Kind]int{},
	}
	s.dir = opts.Dir
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "actorlet-sim-")
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		s.dir, s.ownDir = dir, true
	}
	found := opts.OnlyNode == ""
	for i := range opts.Nodes {
		n, err := newNode(s, i)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.nodes = append(s.nodes, n)
		if opts.OnlyNode != "" && n.name != opts.OnlyNode {
			n.ended = true // not run: nodes are independent (a replay of one)
			continue
		}
		found = true
		n.clock.schedule(Start.Add(relistPeriod), n.relistAll)
	}
	if !found {
		s.Close()
		return nil, fmt.Errorf("sim: node %q is not one of the %d nodes (sim-node-000 ...)", opts.OnlyNode, opts.Nodes)
	}
	s.planWorkload()
	return s, nil
}

// Nodes returns the simulated nodes.
func (s *Sim) Nodes() []*Node { return s.nodes }

// Now is the virtual time of the last event Step ran.
func (s *Sim) Now() time.Time { return s.now }

// Steps is the number of steps run so far, by all nodes.
func (s *Sim) Steps() uint64 {
	var steps uint64
	for _, n := range s.nodes {
		steps += n.step
	}
	return steps
}

// Violations returns the violations found so far, node by node.
func (s *Sim) Violations() []Violation {
	var vs []Violation
	for _, n := range s.nodes {
		vs = append(vs, n.violations...)
	}
	return vs
}

// Step runs the next event of the node whose next event is due first (the
// lowest-numbered node on a tie): a timer, an RPC's reply, a workload
// change, a crash... It returns false when every node's run is over (see
// Node's stopped). A run stepped this way is the same as Run's.
func (s *Sim) Step() bool {
	var next *Node
	var at time.Time
	for _, n := range s.nodes {
		t, ok := n.due()
		if ok && (next == nil || t.Before(at)) {
			next, at = n, t
		}
	}
	if next == nil {
		return false
	}
	next.stepOnce()
	s.now = at
	return true
}

// Run runs every node to the end of its run, Options.Parallel of them at a
// time, then checks (for each node that ran to its end) that every pod
// converged, and returns the report. The error is an internal failure of
// the simulation (a journal that cannot be written, say), not a violation:
// those are in the report.
func (s *Sim) Run(ctx context.Context) (*Report, error) {
	wall := time.Now()
	workers := s.opts.Parallel
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if s.trace != nil {
		workers = 1
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(s.nodes)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(s.nodes); i = int(next.Add(1)) - 1 {
				s.nodes[i].runAll(ctx)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var errs []error
	for _, n := range s.nodes {
		if n.failure != nil {
			errs = append(errs, n.failure)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s.report(time.Since(wall)), nil
}

// Close closes the journals and runtimes and removes a temporary directory.
func (s *Sim) Close() error {
	var errs []error
	for _, n := range s.nodes {
		if n.j != nil && !n.down {
			errs = append(errs, n.j.Close())
		}
		errs = append(errs, n.rt.Close())
	}
	if s.ownDir {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// Digest is the hex SHA-256 over every node's digest, in node order; a
// node's digest covers every event it journaled, in order (Node.Digest).
// The same seed, options and binary give the same digest.
func (s *Sim) Digest() string {
	h := sha256.New()
	for _, n := range s.nodes {
		h.Write([]byte(n.name))
		h.Write(n.digest.Sum(nil))
	}
	return hex.EncodeToString(h.Sum(nil))
}
