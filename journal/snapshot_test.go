package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func snapshotAt(uid string, seq uint64) *pb.Snapshot {
	return &pb.Snapshot{Seq: seq, PodUid: uid, State: &pb.PodState{
		Uid: uid, Seq: seq, Source: "api",
		Containers: map[string]*pb.ContainerRecord{"c": {Name: "c", Attempt: uint32(seq)}},
	}}
}

// storedSeqs reads the seqs of a pod's records directly from the file, in
// log order.
func storedSeqs(t *testing.T, dir, uid string) []uint64 {
	t.Helper()
	var seqs []uint64
	for _, r := range storedRecords(t, dir)[uid] {
		seqs = append(seqs, r.seq)
	}
	return seqs
}

// storedRecords reads every pod's records (seq, log key) directly from the
// file, in log order.
func storedRecords(t testing.TB, dir string) map[string][]recRef {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]recRef{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLog).ForEach(func(k, v []byte) error {
			var e pb.Envelope
			if err := proto.Unmarshal(v[frameLen:], &e); err != nil {
				return err
			}
			out[e.PodUid] = append(out[e.PodUid], recRef{seq: e.Seq, key: binary.BigEndian.Uint64(k)})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSnapshotCompactsCoveredEvents(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	appendT(t, j, "p", evs("p", 1, 10)...)
	appendT(t, j, "other", evs("other", 1, 10)...)

	snap := snapshotAt("p", 6)
	if err := j.SaveSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	s := loadT(t, j, "p")
	if !proto.Equal(s.Snapshot, snap) {
		t.Fatalf("snapshot\n got %v\nwant %v", s.Snapshot, snap)
	}
	if s.Snapshot.SchemaVersion != SchemaVersion || s.Snapshot.TimeUnixNano != testTime.UnixNano() {
		t.Fatalf("snapshot schema %d time %d: defaults not filled", s.Snapshot.SchemaVersion, s.Snapshot.TimeUnixNano)
	}
	wantSeqs(t, s, "p", 7, 10)
	wantSeqs(t, loadT(t, j, "other"), "other", 1, 10)

	// The stream continues after the snapshot; a later snapshot can cover
	// every event.
	appendT(t, j, "p", ev("p", 11))
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 11)); err != nil {
		t.Fatal(err)
	}
	s = loadT(t, j, "p")
	if s.Snapshot.Seq != 11 || len(s.Events) != 0 || s.LastSeq() != 11 {
		t.Fatalf("after snapshot at the last seq: snapshot %d, events %v", s.Snapshot.Seq, seqsOf(s))
	}
	// With no event left, Append continues from the snapshot's seq.
	wantErrIs(t, j.Append(ctx, "p", ev("p", 1)), ErrSequence)
	wantErrIs(t, j.Append(ctx, "p", ev("p", 13)), ErrSequence)
	appendT(t, j, "p", ev("p", 12))
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	closeT(t, j)

	if got := storedSeqs(t, dir, "p"); !slices.Equal(got, []uint64{12}) {
		t.Fatalf("events in the file after compaction: %v, want [12]", got)
	}
	j = openT(t, dir, testOptions(t))
	s = loadT(t, j, "p")
	if s.Snapshot.Seq != 11 {
		t.Fatalf("snapshot after reopen at seq %d, want 11", s.Snapshot.Seq)
	}
	wantSeqs(t, s, "p", 12, 12)
}

func TestSnapshotSequenceAndValidation(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	ctx := context.Background()
	appendT(t, j, "p", evs("p", 1, 5)...)
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 4)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		snap *pb.Snapshot
		want error
	}{
		{"beyond the stored events", snapshotAt("p", 6), ErrSequence},
		{"older than the stored snapshot", snapshotAt("p", 3), ErrSequence},
		{"pod with nothing stored", snapshotAt("q", 1), ErrSequence},
		{"nil", nil, ErrInvalid},
		{"no pod", snapshotAt("", 1), ErrInvalid},
		{"no state", &pb.Snapshot{PodUid: "p", Seq: 5}, ErrInvalid},
		{"seq 0", snapshotAt("p", 0), ErrInvalid},
		{"state of another pod", &pb.Snapshot{PodUid: "p", Seq: 5, State: &pb.PodState{Uid: "q"}}, ErrInvalid},
		{"state at another seq", &pb.Snapshot{PodUid: "p", Seq: 5, State: &pb.PodState{Seq: 4}}, ErrInvalid},
		{"newer schema", &pb.Snapshot{SchemaVersion: SchemaVersion + 1, PodUid: "p", Seq: 5, State: &pb.PodState{}}, ErrSchemaVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrIs(t, j.SaveSnapshot(ctx, tc.snap), tc.want)
		})
	}
	s := loadT(t, j, "p")
	if s.Snapshot.Seq != 4 {
		t.Fatalf("snapshot at %d after rejected snapshots, want 4", s.Snapshot.Seq)
	}
	wantSeqs(t, s, "p", 5, 5)
	// Saving the same snapshot again is allowed.
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 4)); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteDropsStreamAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	appendT(t, j, "p", evs("p", 1, 5)...)
	appendT(t, j, "q", evs("q", 1, 2)...)
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 3)); err != nil {
		t.Fatal(err)
	}
	// A pod with only a snapshot left.
	appendT(t, j, "only-snap", evs("only-snap", 1, 2)...)
	if err := j.SaveSnapshot(ctx, snapshotAt("only-snap", 2)); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"p", "only-snap"} {
		if err := j.Delete(ctx, uid); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Load(ctx, uid); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Load(%s) after Delete = %v, want ErrNotFound", uid, err)
		}
	}
	if err := j.Delete(ctx, "never-existed"); err != nil {
		t.Fatalf("Delete of an unknown pod = %v, want nil", err)
	}
	pods, err := j.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pods, []string{"q"}) {
		t.Fatalf("Pods after Delete = %v, want [q]", pods)
	}
	// The UID starts over.
	appendT(t, j, "p", ev("p", 1))
	closeT(t, j)
	if got := storedSeqs(t, dir, "p"); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("events of p in the file: %v, want [1]", got)
	}
}

func TestPodsIncludesSnapshotOnlyPods(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	ctx := context.Background()
	appendT(t, j, "b", evs("b", 1, 2)...)
	appendT(t, j, "a", evs("a", 1, 2)...)
	// The snapshot covers all of b's events: only the snapshot is left.
	if err := j.SaveSnapshot(ctx, snapshotAt("b", 2)); err != nil {
		t.Fatal(err)
	}
	pods, err := j.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pods, []string{"a", "b"}) {
		t.Fatalf("Pods = %v, want [a b]", pods)
	}
	all, err := j.LoadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all["b"] == nil || all["b"].Snapshot.GetSeq() != 2 || len(all["b"].Events) != 0 {
		t.Fatalf("LoadAll[b] = %v, want the snapshot at 2 alone", all["b"])
	}
	appendT(t, j, "b", ev("b", 3))
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
