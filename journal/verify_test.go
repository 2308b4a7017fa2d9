package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func TestVerifyPassesHealthyJournal(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	ctx := context.Background()
	for p := range 20 {
		uid := fmt.Sprintf("p%d", p)
		appendT(t, j, uid, evs(uid, 1, 5)...)
		if p%2 == 0 {
			if err := j.SaveSnapshot(ctx, snapshotAt(uid, uint64(1+p%5))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := j.Delete(ctx, "p3"); err != nil {
		t.Fatal(err)
	}
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// Damage that bbolt's own check cannot see, written directly into the file:
// Verify finds it, Load refuses the pod, LoadAll returns the other pods.
func TestVerifyFindsDamagedRecords(t *testing.T) {
	marshal := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withSchema := func(e *pb.Envelope) *pb.Envelope { e.SchemaVersion = SchemaVersion; return e }
	for _, tc := range []struct {
		name   string
		edit   func(events, snaps *bolt.Bucket) error // on pod "bad", which has events 1..5
		detail string
	}{
		{"gap", func(events, _ *bolt.Bucket) error { return events.Delete(seqKey(3)) }, "gap in stream: expected seq 3"},
		{"missing first", func(events, _ *bolt.Bucket) error { return events.Delete(seqKey(1)) }, "expected seq 1"},
		{"undecodable", func(events, _ *bolt.Bucket) error {
			return events.Put(seqKey(2), []byte{0xff, 0xff, 0xff})
		}, "does not decode"},
		{"pod_uid of another pod", func(events, _ *bolt.Bucket) error {
			return events.Put(seqKey(2), marshal(withSchema(ev("other", 2))))
		}, `pod_uid "other"`},
		{"seq not its key", func(events, _ *bolt.Bucket) error {
			return events.Put(seqKey(2), marshal(withSchema(ev("bad", 7))))
		}, "record has seq 7"},
		{"unknown schema", func(events, _ *bolt.Bucket) error {
			e := ev("bad", 2)
			e.SchemaVersion = 9
			return events.Put(seqKey(2), marshal(e))
		}, "unknown schema_version 9"},
		{"short key", func(events, _ *bolt.Bucket) error { return events.Put([]byte("x"), []byte{}) }, "not an 8-byte sequence number"},
		{"event not compacted", func(_, snaps *bolt.Bucket) error {
			s := snapshotAt("bad", 3)
			s.SchemaVersion = SchemaVersion
			return snaps.Put([]byte("bad"), marshal(s))
		}, "covered by the snapshot at seq 3"},
		{"undecodable snapshot", func(_, snaps *bolt.Bucket) error {
			return snaps.Put([]byte("bad"), []byte{0x0a})
		}, "snapshot does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j := openT(t, dir, testOptions(t))
			appendT(t, j, "bad", evs("bad", 1, 5)...)
			appendT(t, j, "good", evs("good", 1, 5)...)
			closeT(t, j)
			editFile(t, dir, func(tx *bolt.Tx) error {
				return tc.edit(tx.Bucket(bucketPods).Bucket([]byte("bad")), tx.Bucket(bucketSnapshots))
			})

			j = openT(t, dir, testOptions(t))
			if j.Quarantined() != nil {
				t.Fatalf("record damage quarantined the file at Open: %v", j.Quarantined())
			}
			ctx := context.Background()
			err := j.Verify(ctx)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Verify = %v, want a *CorruptError", err)
			}
			mustContain(t, err, tc.detail, `pod "bad"`, j.Path())
			if got := ce.PodUIDs(); !slices.Equal(got, []string{"bad"}) {
				t.Fatalf("damaged pods %v, want [bad]", got)
			}

			_, err = j.Load(ctx, "bad")
			wantErrIs(t, err, ErrCorrupt)
			wantSeqs(t, loadT(t, j, "good"), "good", 1, 5)
			all, err := j.LoadAll(ctx)
			if !errors.As(err, &ce) || !slices.Equal(ce.PodUIDs(), []string{"bad"}) {
				t.Fatalf("LoadAll error = %v, want a *CorruptError naming pod bad", err)
			}
			if _, ok := all["bad"]; ok || all["good"] == nil {
				t.Fatalf("LoadAll returned pods %v, want good only", keys(all))
			}
			wantSeqs(t, all["good"], "good", 1, 5)

			// Appends to the healthy pod go on; the read-only CLI sees the
			// same problems.
			appendT(t, j, "good", ev("good", 6))
			closeT(t, j)
			r, err := OpenReadOnly(ctx, dir, testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			mustContain(t, r.Verify(ctx), tc.detail)
		})
	}
}

func keys(m map[string]*Stream) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// LoadAll of 10,000 pods with 10 events each, as a node recovers.
func TestLoadAllManyPods(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 records")
	}
	const pods, events = 10000, 10
	dir := t.TempDir()
	fillJournal(t, dir, pods, events, benchRecordSize)
	start := time.Now()
	j := openT(t, dir, testOptions(t))
	t.Logf("Open of %d pods × %d events, with its consistency check: %v", pods, events, time.Since(start))
	start = time.Now()
	all, err := j.LoadAll(context.Background())
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("LoadAll of %d pods × %d events: %v", pods, events, elapsed)
	if len(all) != pods {
		t.Fatalf("LoadAll returned %d pods, want %d", len(all), pods)
	}
	for uid, s := range all {
		if len(s.Events) != events || s.LastSeq() != events {
			t.Fatalf("pod %s: seqs %v", uid, seqsOf(s))
		}
	}
	if limit := time.Second; !raceEnabled && elapsed > limit {
		t.Fatalf("LoadAll took %v, want under %v", elapsed, limit)
	}
}

// fillJournal writes pods × events records (each padded to about recordSize
// bytes if recordSize > 0) into a journal in dir, fast (NoSync), and closes
// it.
func fillJournal(t testing.TB, dir string, pods, events, recordSize int) {
	t.Helper()
	opts := testOptions(t)
	opts.NoSync = true
	opts.Logger = zap.NewNop() // setup of benchmarks too: keep their output clean
	j, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for p := w; p < pods; p += writers {
				uid := fmt.Sprintf("pod-%05d", p)
				batch := make([]*pb.Envelope, events)
				for i := range batch {
					batch[i] = paddedEnvelope(uid, uint64(i+1), recordSize)
				}
				if err := j.Append(context.Background(), uid, batch...); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
