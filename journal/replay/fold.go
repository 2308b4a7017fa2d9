package replay

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// snapshotOpts store a state as the journal stores a snapshot.
var snapshotOpts = proto.MarshalOptions{Deterministic: true}

// Fold replays one pod's stream, as journal.Stream holds it: its stored
// snapshot (nil if none) and the events after it, in seq order. It folds
// the events with lifecycle.Apply from the snapshot's state (or the empty
// state) and returns the divergences it found (see the package
// documentation). It never modifies snap or events.
func Fold(uid string, snap *pb.Snapshot, events []*pb.Envelope) Pod {
	f := folder{pod: Pod{UID: uid, From: "seq 1"}}
	st := lifecycle.NewState(uid)
	at := int64(0)
	if snap != nil {
		st = f.fromSnapshot(uid, snap)
		at = snap.TimeUnixNano
	}
	for _, env := range events {
		if want := st.P.Seq + 1; env.GetSeq() != want {
			f.diverge(env.GetSeq(), "seq", fmt.Sprint(want), fmt.Sprint(env.GetSeq()), "the event does not continue the stream")
		}
		if m := fit(st, env); m != nil {
			f.diverge(env.GetSeq(), m.field, m.folded, m.stored, m.detail)
		}
		lifecycle.Apply(st, env)
		f.pod.Events++
		at = env.GetTimeUnixNano()
	}
	f.pod.LastSeq = st.P.Seq
	if st.Pod != nil {
		f.pod.Name = st.Pod.Namespace + "/" + st.Pod.Name
		f.pod.Phase = string(lifecycle.Phase(st, time.Unix(0, at)))
	}
	if len(events) > 0 {
		f.lastSnapshot(st, time.Unix(0, at))
	}
	for i := range f.pod.Divergences {
		f.pod.Divergences[i].Pod = f.pod.Name
	}
	return f.pod
}

// folder collects one pod's replay.
type folder struct {
	pod Pod
}

func (f *folder) diverge(seq uint64, field, folded, stored, detail string) {
	f.pod.Divergences = append(f.pod.Divergences, Divergence{
		PodUID: f.pod.UID, Seq: seq, Field: field, Folded: folded, Stored: stored, Detail: detail})
}

// fromSnapshot checks the pod's stored snapshot against its own record and
// restores the state the fold starts from, as recovery does
// (actors.Restore). A snapshot that does not restore still gives a state to
// fold on: its PodState without the decoded spec.
func (f *folder) fromSnapshot(uid string, snap *pb.Snapshot) *lifecycle.State {
	f.pod.SnapshotSeq = snap.Seq
	f.pod.From = fmt.Sprintf("snapshot at seq %d (events 1-%d compacted)", snap.Seq, snap.Seq)
	f.pod.Snapshots++
	const detail = "the stored snapshot against its own record"
	ps := snap.GetState()
	if ps == nil {
		f.diverge(snap.Seq, "state", "<set>", absent, "the stored snapshot holds no state")
		st := lifecycle.NewState(uid)
		st.P.Seq = snap.Seq
		return st
	}
	if ps.Uid != "" && ps.Uid != uid {
		f.diverge(snap.Seq, "uid", strconv.Quote(uid), strconv.Quote(ps.Uid), detail)
	}
	if ps.Seq != 0 && ps.Seq != snap.Seq {
		f.diverge(snap.Seq, "seq", fmt.Sprint(snap.Seq), fmt.Sprint(ps.Seq), detail)
	}
	for _, name := range sortedNames(ps.Containers) {
		if r := ps.Containers[name]; r.GetName() != name {
			f.diverge(snap.Seq, containerField(name, "name"), strconv.Quote(name), strconv.Quote(r.GetName()), detail)
		}
	}
	st, err := lifecycle.FromSnapshot(ps)
	if err != nil {
		f.diverge(snap.Seq, "pod_json", "a pod spec", fmt.Sprintf("<%d bytes that do not decode>", len(ps.PodJson)),
			"the stored snapshot does not restore: "+err.Error())
		st = &lifecycle.State{P: proto.Clone(ps).(*pb.PodState)}
		if st.P.Containers == nil {
			st.P.Containers = map[string]*pb.ContainerRecord{}
		}
	}
	st.P.Seq = snap.Seq
	return st
}

// lastSnapshot compares the folded state with the snapshot the PodActor
// would take of it, restored as recovery restores it: the states field by
// field, and the pod statuses derived from them at now.
func (f *folder) lastSnapshot(st *lifecycle.State, now time.Time) {
	f.pod.Snapshots++
	seq := st.P.Seq
	const detail = "the folded state against the snapshot taken of it and restored"
	snap := st.Snapshot()
	b, err := snapshotOpts.Marshal(&pb.Snapshot{Seq: seq, PodUid: f.pod.UID, State: snap})
	if err != nil {
		f.diverge(seq, "state", "a state", "<does not marshal>", err.Error())
		return
	}
	back := new(pb.Snapshot)
	if err := proto.Unmarshal(b, back); err != nil {
		f.diverge(seq, "state", "a state", "<does not unmarshal>", err.Error())
		return
	}
	restored, err := lifecycle.FromSnapshot(back.State)
	if err != nil {
		f.diverge(seq, "pod_json", "a pod spec", fmt.Sprintf("<%d bytes that do not decode>", len(back.State.PodJson)),
			"the snapshot of the folded state does not restore: "+err.Error())
		return
	}
	for _, d := range diffMessages("", snap.ProtoReflect(), restored.Snapshot().ProtoReflect()) {
		f.diverge(seq, d.path, d.a, d.b, detail)
	}
	if (st.Pod == nil) != (restored.Pod == nil) {
		f.diverge(seq, "pod_json", presence(st.Pod != nil), presence(restored.Pod != nil), "the decoded spec: "+detail)
		return
	}
	if st.Pod == nil {
		return
	}
	env := lifecycle.StatusEnv{Now: now}
	diffs, err := diffJSON("status", lifecycle.Status(st, env), lifecycle.Status(restored, env))
	if err != nil {
		f.diverge(seq, "status", "a status", "<does not encode>", err.Error())
		return
	}
	for _, d := range diffs {
		f.diverge(seq, d.path, d.a, d.b, "the status derived from "+detail)
	}
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
