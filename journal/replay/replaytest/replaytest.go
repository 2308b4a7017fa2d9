// Package replaytest builds journals for the tests of journal replay: real
// bbolt journal files holding the events the core journals for a pod whose
// container "app" runs, exits and runs again.
package replaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// T0 is the time of a history's first event; each later event is a second
// later.
var T0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Events is how many events History returns. The container "app" runs
// with ID "<uid>-c1" from seq 6 until it exits at seq 7.
const Events = 10

// History returns the events of pod namespace/name with UID uid: accepted,
// its sandbox created, container "app" started (ID uid+"-c1"), exited with
// code 1, and started again (ID uid+"-c2").
func History(t testing.TB, uid, namespace, name string) []*pb.Envelope {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(uid)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.local/app:1"}}},
	}
	podJSON, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := uid+"-c1", uid+"-c2"
	started := T0.Add(5 * time.Second).UnixNano()
	kinds := []*pb.Event{
		{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{PodJson: podJSON, SpecDigest: "digest-1", Source: "file"}}},
		{Kind: &pb.Event_SandboxRequested{SandboxRequested: &pb.SandboxRequested{Attempt: 1}}},
		{Kind: &pb.Event_SandboxCreated{SandboxCreated: &pb.SandboxCreated{Attempt: 1, SandboxId: uid + "-sb1", Ip: "10.0.0.7"}}},
		{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{Name: "app", Attempt: 1}}},
		{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{Name: "app", Attempt: 1, ContainerId: c1}}},
		{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "app", Attempt: 1, ContainerId: c1, StartedAtUnixNano: started}}},
		{Kind: &pb.Event_ContainerExited{ContainerExited: &pb.ContainerExited{Name: "app", Attempt: 1, ContainerId: c1, ExitCode: 1,
			Reason: "Error", StartedAtUnixNano: started, FinishedAtUnixNano: T0.Add(6 * time.Second).UnixNano()}}},
		{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{Name: "app", Attempt: 2}}},
		{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{Name: "app", Attempt: 2, ContainerId: c2}}},
		{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "app", Attempt: 2, ContainerId: c2,
			StartedAtUnixNano: T0.Add(9 * time.Second).UnixNano()}}},
	}
	out := make([]*pb.Envelope, len(kinds))
	for i, k := range kinds {
		out[i] = &pb.Envelope{Seq: uint64(i + 1), PodUid: uid, TimeUnixNano: T0.Add(time.Duration(i) * time.Second).UnixNano(),
			Event: k}
	}
	return out
}

// Fold folds events from the empty state, as the PodActor did, and
// returns the state as a snapshot holds it (pod_json included).
func Fold(uid string, events []*pb.Envelope) *pb.PodState {
	st := lifecycle.NewState(uid)
	for _, env := range events {
		lifecycle.Apply(st, env)
	}
	return st.Snapshot()
}

// Pod UIDs of Write's journal.
const (
	Plain     = "11111111-0000-4000-8000-000000000001" // default/plain: events 1-10
	Compacted = "22222222-0000-4000-8000-000000000002" // default/compacted: snapshot at 6, events 7-10
)

// SnapshotSeq is the seq of Compacted's snapshot.
const SnapshotSeq = 6

// Write creates the journal in dir with two pods, default/plain (Plain: all
// Events events) and default/compacted (Compacted: a snapshot at seq
// SnapshotSeq and the events after it), and returns it open for writing.
func Write(ctx context.Context, t testing.TB, dir string) *journal.Journal {
	t.Helper()
	j, err := journal.Open(ctx, dir, journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ctx, Plain, History(t, Plain, "default", "plain")...); err != nil {
		t.Fatal(err)
	}
	h := History(t, Compacted, "default", "compacted")
	if err := j.Append(ctx, Compacted, h[:SnapshotSeq]...); err != nil {
		t.Fatal(err)
	}
	snap := &pb.Snapshot{Seq: SnapshotSeq, PodUid: Compacted, State: Fold(Compacted, h[:SnapshotSeq])}
	if err := j.SaveSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ctx, Compacted, h[SnapshotSeq:]...); err != nil {
		t.Fatal(err)
	}
	return j
}

// AlterSnapshot stores Compacted's snapshot again, with the journal's own
// API (so its checksums are right and it is not damage), after alter has
// changed its state.
func AlterSnapshot(ctx context.Context, t testing.TB, j *journal.Journal, alter func(*pb.PodState)) {
	t.Helper()
	s, err := j.Load(ctx, Compacted)
	if err != nil {
		t.Fatal(err)
	}
	st := proto.Clone(s.Snapshot.State).(*pb.PodState)
	alter(st)
	if err := j.SaveSnapshot(ctx, &pb.Snapshot{Seq: s.Snapshot.Seq, PodUid: Compacted, State: st}); err != nil {
		t.Fatal(err)
	}
}

// FlipRecord flips a bit in the event of pod uid's record seq, leaving its
// checksums as they were.
func FlipRecord(t testing.TB, path, uid string, seq uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const frameLen = 9 // see journal/frame.go
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("log"))
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			e := new(pb.Envelope)
			if err := proto.Unmarshal(v[frameLen:], e); err != nil {
				return err
			}
			if e.PodUid == uid && e.Seq == seq {
				w := append([]byte(nil), v...)
				w[len(w)-1] ^= 0x10
				return b.Put(append([]byte(nil), k...), w)
			}
		}
		return fmt.Errorf("no record of pod %s seq %d in %s", uid, seq, path)
	})
	if err != nil {
		t.Fatal(err)
	}
}
