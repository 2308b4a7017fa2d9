package sim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/node/agent"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
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
	// StopAtStep, when non-zero, ends the run after that step (to replay
	// a run up to a reported violation).
	StopAtStep uint64
	// KeepGoing does not stop at the first violation.
	KeepGoing bool
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

// Sim is a deterministic simulation of many actorlet nodes on one virtual
// clock, driven from one goroutine (see the package doc).
type Sim struct {
	opts    Options
	dir     string
	ownDir  bool
	clock   *Clock
	rand    *rand.Rand
	start   time.Time
	nodes   []*Node
	check   *checker
	digest  hash.Hash
	buf     []byte
	step    uint64
	events  uint64
	curNode int

	faultsOn    bool
	faultCounts map[string]int64
	violations  []Violation
	failure     error

	pods       []*simPod
	kindCounts map[Kind]int
	created    int
	edited     int
	deleted    int
	ended      bool

	// bugDoubleStart is the injected bug of the tests: every
	// StartContainer effect is carried out twice.
	bugDoubleStart bool
	// trace, when set (tests), is told what happens to pods.
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
	if opts.Faults != nil {
		if err := opts.Faults.Validate(); err != nil {
			return nil, fmt.Errorf("sim: fault plan: %w", err)
		}
		if opts.Faults.Empty() {
			opts.Faults = nil
		}
	}
	s := &Sim{
		opts:        opts,
		rand:        rand.New(rand.NewPCG(opts.Seed, faults.SubSeed(opts.Seed, "sim"))),
		start:       Start,
		digest:      sha256.New(),
		faultCounts: map[string]int64{},
		kindCounts:  map[Kind]int{},
		faultsOn:    true,
		curNode:     -1,
	}
	s.clock = newClock(Start, rand.New(rand.NewPCG(opts.Seed, faults.SubSeed(opts.Seed, "order"))))
	s.check = newChecker(s)
	s.dir = opts.Dir
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "actorlet-sim-")
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		s.dir, s.ownDir = dir, true
	}
	for i := range opts.Nodes {
		n, err := newNode(s, i)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.nodes = append(s.nodes, n)
		s.clock.schedule(Start.Add(relistPeriod), i, n.relistAll)
	}
	s.planWorkload()
	s.clock.schedule(Start.Add(opts.Duration), -1, func() { s.faultsOn = false })
	s.clock.schedule(Start.Add(opts.Duration+opts.Quiet), -1, func() { s.ended = true })
	return s, nil
}

// Nodes returns the simulated nodes.
func (s *Sim) Nodes() []*Node { return s.nodes }

// Clock returns the virtual clock.
func (s *Sim) Clock() *Clock { return s.clock }

// Steps is the number of steps run so far.
func (s *Sim) Steps() uint64 { return s.step }

// Violations returns the violations found so far.
func (s *Sim) Violations() []Violation { return slices.Clone(s.violations) }

// Step runs the next event (a timer, an RPC's reply, a workload change, a
// crash...), then takes the runtime events it caused. It returns false
// when the run is over: the end of Duration+Quiet, StopAtStep, a
// violation (unless KeepGoing), or an internal failure (see Run).
func (s *Sim) Step() bool {
	if s.ended || s.failure != nil || (len(s.violations) > 0 && !s.opts.KeepGoing) {
		return false
	}
	if s.opts.StopAtStep > 0 && s.step >= s.opts.StopAtStep {
		return false
	}
	e := s.clock.next()
	if e == nil {
		s.ended = true
		return false
	}
	s.step++
	s.curNode = e.node
	e.fn()
	if e.node >= 0 {
		s.nodes[e.node].pumpEvents()
	}
	s.curNode = -1
	return !s.ended
}

// Run steps until the run is over, then (if it ran to its end) checks that
// every pod converged, and returns the report. The error is an internal
// failure of the simulation (a journal that cannot be written, say), not a
// violation: those are in the report.
func (s *Sim) Run(ctx context.Context) (*Report, error) {
	wall := time.Now()
	for s.Step() {
		if s.step%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if s.failure != nil {
		return nil, s.failure
	}
	if s.ended && (len(s.violations) == 0 || s.opts.KeepGoing) {
		s.finalChecks()
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

func (s *Sim) crashesOn() bool { return s.faultsOn && s.opts.CrashEvery > 0 }

func (s *Sim) workloadOn() bool { return s.faultsOn }

func (s *Sim) countFault(kind string) { s.faultCounts[kind]++ }

// violate records a violation found now.
func (s *Sim) violate(n *Node, uid, what string) {
	name := ""
	if n != nil {
		name = n.name
	}
	s.violations = append(s.violations, Violation{
		Step: s.step, At: s.clock.Now().Sub(s.start).String(), Node: name, Pod: uid, What: what,
	})
}

// fail records an internal failure: the run stops.
func (s *Sim) fail(n *Node, uid, what string) {
	if s.failure == nil {
		s.failure = fmt.Errorf("sim: step %d, node %s, pod %q: %s", s.step, n.name, uid, what)
	}
}

// digestAppend folds one journal append into the run's digest: the node,
// the pod and every envelope, deterministically encoded.
func (s *Sim) digestAppend(node int, uid string, events []*pb.Envelope) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(node))
	s.digest.Write(b[:])
	s.digest.Write([]byte(uid))
	for _, env := range events {
		s.events++
		var err error
		s.buf, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(s.buf[:0], env)
		if err != nil {
			panic(err) // an envelope that was just journaled encodes
		}
		binary.BigEndian.PutUint64(b[:], uint64(len(s.buf)))
		s.digest.Write(b[:])
		s.digest.Write(s.buf)
	}
}

// Digest is the hex SHA-256 over every event journaled so far by every
// node, in the order they were journaled (the same seed, options and
// binary give the same digest).
func (s *Sim) Digest() string { return hex.EncodeToString(s.digest.Sum(nil)) }
