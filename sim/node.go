package sim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/faults"
	crisim "github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/agent"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Node is one simulated node: its own simulated runtime (cri/sim, with the
// node's fault plan and seed), the real CRI client over it, its own journal
// (the real journal package, one bbolt file), the pure lifecycle core, and
// the shells of its pods. Its desired pods (the source, as an API server
// would hold them) outlive its crashes; everything else in memory does not.
type Node struct {
	s    *Sim
	idx  int
	name string

	rt     *crisim.Runtime
	client *cri.Client
	// epochs number this incarnation's listings (see cri.Epochs).
	epochs *cri.Epochs
	deps   *actors.Deps
	dir    string
	j      *journal.Journal

	plan       *faults.Plan
	faultSeed  uint64
	callsTotal uint64
	callsBy    map[string]uint64
	downUntil  time.Time
	// delay is the virtual time the calls made since it was last reset
	// took (latencies, hangs): the shell hears of their outcome that much
	// later.
	delay time.Duration
	ids   uint64

	// The node process's memory: lost by a crash.
	epoch         int
	down          bool
	pods          map[string]*shell
	lastView      map[string]*cri.PodView
	relistPending map[string]bool
	sub           *crisim.Subscription
	streamNo      uint64
	eventNo       uint64
	appends       uint64
	crashAt       uint64

	// The pod source (an API server's view of the node's pods), each pod
	// as the source's input that gives it (encoded once per change).
	desired map[string]*pb.PodDesired

	stats nodeStats

	// The node's run (noderun.go), its own so that nodes run side by
	// side: its clock and random source (crash points, restart delays),
	// steps, checker, findings and digest, and its share of the workload.
	clock       *Clock
	rand        *rand.Rand
	step        uint64
	check       *checker
	violations  []Violation
	failure     error
	faultCounts map[string]int64
	digest      hash.Hash
	buf         []byte
	events      uint64
	workload    []*simPod
	created     int
	edited      int
	deleted     int
	// ended: the run is over; complete: it went to its end.
	ended, complete bool
}

type nodeStats struct {
	calls   uint64
	crashes int
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Runtime is the node's simulated runtime.
func (n *Node) Runtime() *crisim.Runtime { return n.rt }

// snapshotEvery is how many events a pod's shell journals between snapshots.
const snapshotEvery = 64

func newNode(s *Sim, idx int) (*Node, error) {
	name := fmt.Sprintf("sim-node-%03d", idx)
	n := &Node{
		s: s, idx: idx, name: name,
		callsBy: map[string]uint64{}, desired: map[string]*pb.PodDesired{},
		dir:         filepath.Join(s.dir, name),
		clock:       newClock(Start, rand.New(rand.NewPCG(s.opts.Seed, faults.SubSeed(s.opts.Seed, "order/"+name)))),
		rand:        rand.New(rand.NewPCG(s.opts.Seed, faults.SubSeed(s.opts.Seed, "node/"+name))),
		faultCounts: map[string]int64{},
		digest:      sha256.New(),
	}
	n.check = newChecker(n)
	n.resetMemory()
	n.plan = s.opts.Faults
	n.faultSeed = faults.SubSeed(s.opts.Seed, name)
	clk := n.clock
	rt, err := crisim.New(crisim.Options{
		Clock:      clk,
		PodCIDR:    "10.88.0.0/16",
		NewID:      n.newID,
		SyncTimers: true,
	})
	if err != nil {
		return nil, err
	}
	n.rt = rt
	n.client = cri.NewFromConn(newDirectConn(n, rt), newDirectConn(n, rt), cri.Options{Timeout: s.opts.RuntimeTimeout, SlowCall: time.Hour, Clock: clk, StatusConcurrency: 1})
	// The node's parts come from the same options as a real node's: the
	// simulation's defaults, the user's (Options.Node), then what the
	// simulation must own (its runtime, clock, name and directory).
	opts := []agent.Option{agent.WithLogger(zap.NewNop()), agent.WithHostIP("10.0.0.1")}
	opts = append(opts, s.opts.Node...)
	opts = append(opts, agent.WithNodeName(name), agent.WithRootDir(n.dir),
		agent.WithRuntime(n.client, crisim.DefaultRuntimeName), agent.WithClock(clk))
	deps, err := agent.PodDeps(opts...)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	if err := notDriven(deps); err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	deps.RetryMin, deps.RetryMax = 100*time.Millisecond, 10*time.Second
	n.deps = deps
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	if err := n.openJournal(); err != nil {
		return nil, err
	}
	n.sub = rt.Subscribe()
	n.scheduleNextCrash()
	return n, nil
}

// newID makes the runtime's IDs: 64 hex digits from the node and a counter,
// the same in every run with the same seed.
func (n *Node) newID() string {
	n.ids++
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(n.idx))
	binary.BigEndian.PutUint64(b[8:], n.ids)
	sum := sha256.Sum256(b[:])
	return hex.EncodeToString(sum[:])
}

func (n *Node) resetMemory() {
	n.pods = map[string]*shell{}
	n.lastView = map[string]*cri.PodView{}
	n.relistPending = map[string]bool{}
}

func (n *Node) openJournal() error {
	// NoSync: a simulated crash is a process kill (kill -9), which leaves
	// the operating system's page cache, so what was committed survives
	// it with or without fsync. Machine crashes are not simulated.
	j, err := journal.Open(context.Background(), n.dir, journal.Options{NoSync: true})
	if err != nil {
		return fmt.Errorf("node %s: open journal: %w", n.name, err)
	}
	n.j = j
	// A new process: its listings are numbered above the last one's.
	n.epochs = cri.NewEpochs(j.Incarnation())
	if n.deps != nil {
		n.deps.Epochs = n.epochs
	}
	return nil
}

// after schedules fn for this incarnation of the node: a crash in between
// cancels it (its memory is gone).
func (n *Node) after(d time.Duration, fn func()) *event {
	epoch := n.epoch
	return n.clock.schedule(n.clock.Now().Add(d), func() {
		if n.epoch == epoch && !n.down {
			fn()
		}
	})
}

// append journals events of pod uid, durably, and folds them into the
// run's digest.
func (n *Node) append(uid string, events []*pb.Envelope) error {
	if err := n.j.Append(context.Background(), uid, events...); err != nil {
		return fmt.Errorf("node %s: append for pod %s: %w", n.name, uid, err)
	}
	n.appends++
	n.digestAppend(uid, events)
	return nil
}

// crashDue reports whether the node is to crash at this journal point.
func (n *Node) crashDue() bool {
	return n.crashesOn() && n.crashAt != 0 && n.appends >= n.crashAt
}

func (n *Node) scheduleNextCrash() {
	n.crashAt = 0
	if mean := n.s.opts.CrashEvery; mean > 0 {
		n.crashAt = n.appends + 1 + uint64(n.rand.IntN(2*mean))
	}
}

// crash is a kill -9 of the node process: everything in memory is dropped
// (shells, timers, replies in flight, the event subscription), the
// journal's file is closed as the kernel closes it, and the node comes back
// a few seconds later and recovers from its journal and the runtime.
func (n *Node) crash(where string) {
	if n.s.trace != nil {
		n.s.trace(n, "", "crash")
	}
	n.countFault("node-crash")
	n.stats.crashes++
	n.epoch++
	n.down = true
	for _, p := range n.pods {
		p.stopped = true
	}
	n.resetMemory()
	if n.sub != nil {
		n.sub.Close()
		n.sub = nil
	}
	if err := n.j.Close(); err != nil {
		n.fail("", fmt.Sprintf("closing the journal at a crash: %v", err))
	}
	n.scheduleNextCrash()
	restart := time.Second + time.Duration(n.rand.IntN(5000))*time.Millisecond
	n.clock.schedule(n.clock.Now().Add(restart), n.restart)
}

// restart starts the node process again: it opens the journal and
// recovers (recover) once the runtime answers a listing.
func (n *Node) restart() {
	if err := n.openJournal(); err != nil {
		n.fail("", err.Error())
		return
	}
	n.sub = n.rt.Subscribe()
	n.streamNo++
	n.eventNo = 0
	n.recover()
}

// recover is the Supervisor's start-up recovery: every pod the journal,
// the source or the runtime knows gets a shell, first its desired state
// (or its removal), then its runtime view.
func (n *Node) recover() {
	ctx := context.Background()
	streams, err := n.j.LoadAll(ctx)
	if err != nil {
		n.fail("", fmt.Sprintf("recovery: load the journal: %v", err))
		return
	}
	states := map[string]*lifecycle.State{}
	for uid, st := range streams {
		state, err := actors.Restore(uid, st.Snapshot, st.Events)
		if err != nil {
			n.fail(uid, fmt.Sprintf("recovery: replay: %v", err))
			return
		}
		states[uid] = state
	}
	// As the node's start-up does: the runtime is asked only about what
	// changed since the journal recorded it.
	n.delay = 0
	listedAt, listEpoch := n.clock.Now(), n.epochs.Next()
	views, err := n.client.ListPodsKnown(ctx, actors.KnownObjects(states))
	if err != nil {
		// The runtime does not answer yet: try again, as a starting node does.
		epoch := n.epoch
		n.clock.schedule(n.clock.Now().Add(n.delay+time.Second), func() {
			if n.epoch == epoch {
				n.recover()
			}
		})
		return
	}
	n.down = false
	n.check.recovered(states)
	uids := map[string]bool{}
	for uid, st := range states {
		if !st.Done() {
			uids[uid] = true
		}
	}
	for uid := range n.desired {
		uids[uid] = true
	}
	returned := n.epochs.Now()
	for uid, v := range views {
		v.Epoch, v.Returned = listEpoch, returned
		if !v.Empty() {
			uids[uid] = true
		}
		n.lastView[uid] = v
	}
	for _, uid := range sortedKeys(uids) {
		p := n.spawn(uid, states[uid])
		if msg, ok := n.desired[uid]; ok {
			n.handle(p, msg)
		} else if st := states[uid]; st != nil && st.Accepted() {
			n.handle(p, &pb.PodUndesired{Reason: "Removed"})
		}
		if n.down {
			return // crashed again while recovering
		}
		if n.pods[uid] != p {
			continue
		}
		v := views[uid]
		if v == nil {
			v = &cri.PodView{UID: uid, ListedAt: listedAt, Epoch: listEpoch, Returned: returned}
		}
		n.handle(p, actors.Observed(uid, v))
		if n.down {
			return // crashed again while recovering
		}
	}
	n.after(relistPeriod, n.relistAll)
}

// spawn makes the shell of pod uid, with st, or else with what the journal
// holds of it (nothing: a new pod).
func (n *Node) spawn(uid string, st *lifecycle.State) *shell {
	if n.down {
		// The node just crashed (in the middle of a loop over pods): it
		// keeps nothing; the shell is dead from the start.
		p := n.newShell(uid, lifecycle.NewState(uid))
		p.stopped = true
		return p
	}
	if p := n.pods[uid]; p != nil {
		return p
	}
	if st == nil {
		stream, err := n.j.Load(context.Background(), uid)
		switch {
		case err == nil:
			st, err = actors.Restore(uid, stream.Snapshot, stream.Events)
			if err != nil {
				n.fail(uid, fmt.Sprintf("load pod: %v", err))
				st = lifecycle.NewState(uid)
			}
		default:
			st = lifecycle.NewState(uid)
		}
	}
	p := n.newShell(uid, st)
	n.pods[uid] = p
	if n.s.trace != nil {
		n.s.trace(n, uid, fmt.Sprintf("spawn seq=%d removed=%v", st.P.Seq, st.P.Removed))
	}
	return p
}

// ---- the pod source ----

// setDesired puts pod (new or changed) into the node's source and tells
// its shell, as the Supervisor does.
func (n *Node) setDesired(pod *corev1.Pod) {
	uid := string(pod.UID)
	msg := desiredMsg(pod)
	n.desired[uid] = msg
	if n.down {
		return
	}
	p := n.pods[uid]
	if p == nil {
		p = n.spawn(uid, nil)
		n.handle(p, msg)
		if n.pods[uid] == p && !n.down {
			n.handle(p, &pb.RuntimeObserved{PodUid: uid, Complete: true, ListedAtUnixNano: n.clock.Now().UnixNano(), ListedEpoch: n.epochs.Now(), ReturnedEpoch: n.epochs.Now()})
		}
		return
	}
	n.handle(p, msg)
}

// removeDesired takes pod uid out of the node's source.
func (n *Node) removeDesired(uid string) {
	delete(n.desired, uid)
	if n.down {
		return
	}
	if p := n.pods[uid]; p != nil {
		n.handle(p, &pb.PodUndesired{Reason: "Removed"})
	}
}

func desiredMsg(pod *corev1.Pod) *pb.PodDesired {
	b, err := jsonMarshal(pod)
	if err != nil {
		panic(err) // a Pod always encodes
	}
	return &pb.PodDesired{PodJson: b, Source: "sim"}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
