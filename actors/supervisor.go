package actors

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// SourceSnapshot is the whole desired set of one pod source (level-triggered).
// Its pods are read only, to the source too once handed on: a source may
// hand an unchanged pod on again as the same *Pod, which the Supervisor
// takes as unchanged without looking into it.
type SourceSnapshot struct {
	Source string
	Pods   []*corev1.Pod
}

// EvictPod asks the pod's actor to evict it (node-pressure eviction); a
// pod without an actor is ignored.
type EvictPod struct {
	UID             string
	Reason, Message string
	Grace           time.Duration
}

// Recovery is what start-up found before any actor runs: the journal's
// states, the runtime's views and the sources' first snapshots. Pods in none
// of the sources are taken down; runtime objects no pod owns are removed.
type Recovery struct {
	// States are the journal's pods, all of them: a pod not in States has
	// no stream in the journal, and its actor starts from
	// lifecycle.NewState without reading the journal again.
	States  map[string]*lifecycle.State
	Views   map[string]*pb.RuntimeObserved
	Sources []SourceSnapshot
	// Pending names the sources that have not delivered their first set
	// yet (an API server that does not answer): their journaled pods are
	// kept running, and taken down only if the source's first set leaves
	// them out.
	Pending  []string
	ListedAt time.Time
	// Epoch is the start-up listing's (cri.Epochs.Next before it).
	Epoch uint64
	// Damaged names the pods whose journal streams failed their checks and
	// were dropped, with what was wrong: they are rebuilt from the runtime.
	Damaged map[string]string
	// Lost, when set, says why the whole journal's history is gone (the
	// file was quarantined, or it was empty or missing while the runtime
	// held actorlet's pods).
	Lost string
}

// rebuildDamage says why the pod uid has to be rebuilt from the runtime,
// or "" if its journal explains it: its stream was damaged, or the runtime
// holds objects of it that its journal does not record at all.
func (rec *Recovery) rebuildDamage(uid string, st *lifecycle.State, v *pb.RuntimeObserved) string {
	if d, ok := rec.Damaged[uid]; ok {
		return "journal stream damaged: " + d
	}
	if len(v.GetSandboxes())+len(v.GetContainers()) == 0 || (st != nil && st.HasRuntimeHistory()) {
		return ""
	}
	if rec.Lost != "" {
		return rec.Lost
	}
	return "the journal has no record of the pod's runtime objects"
}

// ActivePods asks the Supervisor for the UIDs it runs actors for; the reply is []string.
type ActivePods struct{}

// supervisor spawns one PodActor per pod UID and routes inputs to them. It
// holds no pod state: only which pods are desired by which source, and the
// PIDs of their actors.
type supervisor struct {
	// parent bounds the Supervisor's life (NewSupervisorProps); ctx is
	// this incarnation's, derived from parent and cancelled when the
	// Supervisor stops or restarts. Every PodActor's context derives from
	// ctx, so its end cancels the pods' CRI calls in flight.
	parent context.Context
	ctx    *podContext
	// podProps spawn every PodActor of this incarnation (podSpawns).
	podProps *actor.Props
	deps     *Deps
	load     Loader
	rec      *Recovery
	pods     map[string]*actor.PID
	desired  map[string]map[string]desiredPod // source -> uid -> latest wish
	// awaiting: journaled pods of sources that have not delivered yet
	// (Recovery.Pending), by source.
	awaiting map[string][]string
	admitted *admission
	respawn  *respawner
	stopping bool
}

// desiredPod is a source's latest wish for a pod: the source's pod object
// (shared, never mutated) and a digest of its content.
type desiredPod struct {
	pod    *corev1.Pod
	digest [sha256.Size]byte
}

// desire is a source's wish as the Supervisor sends it to the pod's actor
// (and answers a resync with): the PodDesired to decide, and the source's
// pod object it encodes, which the core keeps as the pod's spec in place of
// its own decoding when the two are equal (lifecycle.Driver.Offer), so the
// node holds the pod in one shape. The pod is shared and never mutated.
type desire struct {
	msg *pb.PodDesired
	pod *corev1.Pod
}

// resync is a (re)started PodActor asking for its pod's desired state.
type resync struct{ uid string }

// Loader loads a pod's state from the journal; a pod the journal does not
// know gets lifecycle.NewState.
type Loader func(ctx context.Context, uid string) (*lifecycle.State, error)

// NewSupervisorProps returns the props of the Supervisor. load reloads a
// pod's state from the journal (used for pods not in rec and on restarts).
//
// ctx bounds the Supervisor's life, as the node's Run context: each
// PodActor runs on a context derived from it (cancelled when the pod's
// actor stops or restarts), and so do its ContainerActors' CRI calls,
// volume set-ups, probes and journal calls. When ctx ends or the
// Supervisor stops, the calls in flight are cancelled instead of running
// out their timeouts; an effect cut short so is not a failure: it stays
// outstanding in the journal and is carried out by the next start.
func NewSupervisorProps(ctx context.Context, deps Deps, load Loader, rec *Recovery) *actor.Props {
	deps.withDefaults()
	d := &deps
	d.spawns = &podSpawns{}
	return actor.PropsFromProducer(func() actor.Actor {
		return &supervisor{parent: ctx, deps: d, rec: rec, load: load, pods: map[string]*actor.PID{}, desired: map[string]map[string]desiredPod{}, awaiting: map[string][]string{}, admitted: newAdmission(d.Admission),
			respawn: newRespawner(d)}
	}, actor.WithSupervisor(podStrategy(d)))
}

func (s *supervisor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.ctx = newPodContext(s.parent) // its PodActors' contexts join it by a slot in a slice
		deps, load, parent := s.deps, s.load, s.ctx
		s.podProps = actor.PropsFromProducer(func() actor.Actor {
			return &podActor{deps: deps, load: load, parent: parent} // its pod: podSpawns, at Started
		}, deps.mailbox()...)
		s.recover(ctx)
	case *actor.Stopping:
		s.stopping = true
		s.ctx.Cancel() // before protoactor stops the pod actors: their calls return now
	case *actor.Restarting:
		s.ctx.Cancel()
	case *actor.Terminated:
		dropStoppedChildren(ctx) // a finished PodActor and its state
		if s.stopping {
			return // its children stop with it
		}
		// Decided behind the user messages already queued: a PodActor that
		// finished sent podRemoved before it stopped, but protoactor
		// delivers Terminated, a system message, ahead of them.
		ctx.Send(ctx.Self(), &childStopped{who: m.Who})
	case *childStopped:
		s.terminated(ctx, m.who)
	case *respawnPod:
		s.respawned(ctx, m)
	case *SourceSnapshot:
		s.source(ctx, m)
	case *pb.RuntimeObserved:
		s.observed(ctx, m)
	case *podReleased:
		s.admitted.release(m.uid)
		s.retryResizes(ctx)
	case *podRemoved:
		delete(s.pods, m.uid)
		s.admitted.release(m.uid)
		s.retryResizes(ctx)
		s.respawn.forget(m.uid)
		// Wanted again while it was going (a manifest removed and put back):
		// a new actor gives it a new life.
		for name, src := range s.desired {
			if d, ok := src[m.uid]; ok && d.pod.DeletionTimestamp == nil {
				msg, _ := desiredMsg(d.pod, name)
				msg.RejectReason, msg.RejectMessage = s.admitted.admit(d.pod)
				pid := s.spawn(ctx, m.uid, nil, withView)
				ctx.Send(pid, &desire{msg: msg, pod: d.pod})
				ctx.Send(pid, &pb.RuntimeObserved{PodUid: m.uid, Complete: true, ListedAtUnixNano: s.deps.Clock.Now().UnixNano(), ListedEpoch: s.deps.Epochs.Now(), ReturnedEpoch: s.deps.Epochs.Now()})
				break
			}
		}
	case *resync:
		// A restarted PodActor lost the inputs of its previous incarnation:
		// give it the sources' latest wish again (it is idempotent).
		if name, d, ok := s.wish(m.uid); ok {
			msg, _ := desiredMsg(d.pod, name)
			s.judgeResize(msg, d.pod)
			ctx.Respond(&desire{msg: msg, pod: d.pod})
			return
		}
		ctx.Respond(&pb.PodUndesired{Reason: "Removed"})
	case *EvictPod:
		if pid, ok := s.pods[m.UID]; ok {
			ctx.Send(pid, &pb.PodEvict{Reason: m.Reason, Message: m.Message, GracePeriodNanos: int64(m.Grace)})
		}
	case *ActivePods:
		uids := make([]string, 0, len(s.pods))
		for uid := range s.pods {
			uids = append(uids, uid)
		}
		ctx.Respond(uids)
	}
}

// recover starts an actor for every pod the journal, the sources or the
// runtime know, and gives each first its desired state, then its runtime view.
func (s *supervisor) recover(ctx actor.Context) {
	rec := s.rec
	s.rec = nil
	if rec == nil {
		return
	}
	uids := map[string]bool{}
	for uid, st := range rec.States {
		if !st.Done() {
			uids[uid] = true
			if st.Accepted() && lifecycle.Phase(st, rec.ListedAt) != corev1.PodSucceeded && lifecycle.Phase(st, rec.ListedAt) != corev1.PodFailed {
				s.admitted.hold(uid, st.Pod)
			}
		}
	}
	// Pods new to the journal are admitted in the sources' order.
	want := map[string]*desire{}
	for _, src := range rec.Sources {
		s.desired[src.Source] = map[string]desiredPod{}
		for _, pod := range src.Pods {
			uid := string(pod.UID)
			msg, digest := desiredMsg(pod, src.Source)
			s.desired[src.Source][uid] = desiredPod{pod: pod, digest: digest}
			if st := rec.States[uid]; st == nil || st.P.Removed {
				msg.RejectReason, msg.RejectMessage = s.admitted.admit(pod)
			}
			s.judgeResize(msg, pod)
			want[uid] = &desire{msg: msg, pod: pod}
		}
	}
	for uid := range want {
		uids[uid] = true
	}
	for uid, v := range rec.Views {
		if len(v.Sandboxes)+len(v.Containers) > 0 {
			uids[uid] = true
		}
	}
	pending := map[string]bool{}
	for _, name := range rec.Pending {
		pending[name] = true
	}
	listed := rec.ListedAt.UnixNano()
	for uid := range uids {
		st := rec.States[uid]
		if st == nil {
			// Not in the journal (States holds all it had): nothing to
			// load, as for a pod new to the node.
			st = lifecycle.NewState(uid)
		}
		pid := s.spawn(ctx, uid, st, withView)
		if msg, ok := want[uid]; ok {
			ctx.Send(pid, msg)
		} else if st := rec.States[uid]; st != nil && st.Accepted() && pending[st.P.Source] {
			s.awaiting[st.P.Source] = append(s.awaiting[st.P.Source], uid)
		} else if st != nil && st.Accepted() {
			ctx.Send(pid, &pb.PodUndesired{Reason: "Removed"})
		}
		v := rec.Views[uid]
		if v == nil {
			v = &pb.RuntimeObserved{PodUid: uid, Complete: true, ListedAtUnixNano: listed, ListedEpoch: rec.Epoch, ReturnedEpoch: rec.Epoch}
		}
		if _, wanted := want[uid]; wanted {
			if damage := rec.rebuildDamage(uid, rec.States[uid], v); damage != "" {
				v = proto.Clone(v).(*pb.RuntimeObserved)
				v.Rebuild, v.Damage = true, damage
			}
		}
		ctx.Send(pid, v)
	}
	s.deps.Logger.Info("recovered", zap.Int("pods", len(uids)), zap.Int("journaled", len(rec.States)), zap.Int("runtime", len(rec.Views)))
}

func (s *supervisor) spawn(ctx actor.Context, uid string, initial *lifecycle.State, mode spawnMode) *actor.PID {
	if pid, ok := s.pods[uid]; ok {
		return pid
	}
	// A unique name: the actor of the pod's previous life may still be
	// stopping. The actor takes its pod at Started (podSpawns), and with it
	// the recovered state, which its Driver holds from then on.
	name := uid + ctx.ActorSystem().ProcessRegistry.NextId()
	id := ctx.Self().Id + "/" + name // as SpawnNamed names a child
	s.deps.spawns.put(id, podSpawn{uid: uid, initial: initial, mode: mode})
	pid, err := ctx.SpawnNamed(s.podProps, name)
	if err != nil {
		s.deps.spawns.take(id)
		panic(err) // as SpawnPrefix: a name made unique cannot be taken
	}
	s.pods[uid] = pid
	return pid
}

// podOf is the pod of the PodActor who, a child of the Supervisor self,
// read from its name: spawn names it uid + NextId(), and NextId's only "$"
// is its first character. (A map by PID would cost every running pod an
// entry.) ok is false for a PID spawn did not name.
func podOf(self, who *actor.PID) (uid string, ok bool) {
	name, ok := strings.CutPrefix(who.Id, self.Id+"/")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(name, '$')
	if i < 0 {
		return "", false
	}
	return name[:i], true
}

func (s *supervisor) source(ctx actor.Context, m *SourceSnapshot) {
	prev := s.desired[m.Source]
	next := map[string]desiredPod{}
	for _, pod := range m.Pods {
		uid := string(pod.UID)
		if old, ok := prev[uid]; ok && old.pod == pod {
			// The same copy as in the source's last set (apisource hands an
			// unchanged pod on as the same copy): not encoded again.
			next[uid] = old
			continue
		}
		msg, digest := desiredMsg(pod, m.Source)
		next[uid] = desiredPod{pod: pod, digest: digest}
		if old, ok := prev[uid]; ok && old.digest == digest {
			continue
		}
		if s.respawn.waiting[uid] {
			continue // its next actor asks for the latest wish
		}
		if pid, ok := s.pods[uid]; ok {
			s.judgeResize(msg, pod)
			ctx.Send(pid, &desire{msg: msg, pod: pod})
			continue
		}
		// A pod new to this process. The runtime has nothing of it: the
		// start-up listing saw everything there was, and since then the
		// watcher would have reported its objects and spawned its actor. So
		// its first view is the empty one, without a listing.
		msg.RejectReason, msg.RejectMessage = s.admitted.admit(pod)
		pid := s.spawn(ctx, uid, nil, withView)
		ctx.Send(pid, &desire{msg: msg, pod: pod})
		ctx.Send(pid, &pb.RuntimeObserved{PodUid: uid, Complete: true, ListedAtUnixNano: s.deps.Clock.Now().UnixNano(), ListedEpoch: s.deps.Epochs.Now(), ReturnedEpoch: s.deps.Epochs.Now()})
	}
	gone := slices.Collect(maps.Keys(prev))
	if _, first := s.desired[m.Source]; !first {
		gone = append(gone, s.awaiting[m.Source]...)
		delete(s.awaiting, m.Source)
	}
	for _, uid := range gone {
		if _, ok := next[uid]; ok {
			continue
		}
		if pid, ok := s.pods[uid]; ok {
			ctx.Send(pid, &pb.PodUndesired{Reason: "Removed"})
		}
	}
	s.desired[m.Source] = next
}

func (s *supervisor) observed(ctx actor.Context, m *pb.RuntimeObserved) {
	if pid, ok := s.pods[m.PodUid]; ok {
		ctx.Send(pid, m)
		return
	}
	if s.respawn.waiting[m.PodUid] {
		return // its next actor lists the runtime
	}
	if len(m.Sandboxes)+len(m.Containers) == 0 {
		return
	}
	// Runtime objects of a pod no actor owns: its actor reloads the pod's
	// journal (if any) and removes what it does not explain.
	ctx.Send(s.spawn(ctx, m.PodUid, nil, withView), m)
}

// wish is a source's latest wish for uid and the source's name, if any
// source wants the pod.
func (s *supervisor) wish(uid string) (string, desiredPod, bool) {
	for name, src := range s.desired {
		if d, ok := src[uid]; ok {
			return name, d, true
		}
	}
	return "", desiredPod{}, false
}

// desiredMsg is the PodDesired of a source's pod and a digest of its content.
func desiredMsg(pod *corev1.Pod, source string) (*pb.PodDesired, [sha256.Size]byte) {
	b, err := json.Marshal(pod)
	if err != nil {
		panic(err) // a Pod always encodes
	}
	return &pb.PodDesired{PodJson: b, Source: source}, sha256.Sum256(b)
}

// podStrategy maps a PodActor's failure to a directive: a journal error
// (a state that cannot be loaded; failed appends do not panic, see
// podActor.appendFailed) restarts the actor, which reloads its state from disk (at most 10 times in
// 10 s; beyond that the pod's actor is stopped); a journal that is gone stops
// it and reports the node as failed (OnFatal), since no restart can help;
// any other panic restarts it.
func podStrategy(d *Deps) actor.SupervisorStrategy {
	log := d.Logger
	return actor.NewOneForOneStrategy(10, 10*time.Second, func(reason any) actor.Directive {
		return decide(d, log, reason)
	})
}

func decide(d *Deps, log *zap.Logger, reason any) actor.Directive {
	var je *JournalError
	err, _ := reason.(error)
	switch {
	case errors.As(err, &je) && d.Fatal != nil && d.Fatal(je.Err):
		log.Error("the journal is gone; stopping pod actor and the node", zap.String("pod", je.PodUID), zap.Error(je.Err))
		if d.OnFatal != nil {
			d.OnFatal(je)
		}
		return actor.StopDirective
	case errors.As(err, &je):
		log.Error("pod actor failed to journal; restarting it from disk", zap.String("pod", je.PodUID), zap.Error(je.Err))
		return actor.RestartDirective
	default:
		log.Error("pod actor panicked; restarting it from disk", zap.Any("reason", reason))
		return actor.RestartDirective
	}
}
