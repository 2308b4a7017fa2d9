package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
	"google.golang.org/protobuf/encoding/protowire"
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
// Verify finds it, Load refuses the damaged pods, LoadAll returns the other
// pods. A record whose pod cannot be told is a problem of the file: Load
// then refuses every pod, since it could be any pod's last event.
func TestVerifyFindsDamagedRecords(t *testing.T) {
	marshal := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withSchema := func(e *pb.Envelope) *pb.Envelope { e.SchemaVersion = SchemaVersion; return e }
	type edit func(t *testing.T, log, snaps *bolt.Bucket) error
	// put replaces the record of pod "bad" at seq with v.
	put := func(seq uint64, v func() []byte) edit {
		return func(t *testing.T, log, _ *bolt.Bucket) error {
			k := keyOfRecord(t, log, "bad", seq)
			return log.Put(k, sealT(k, v()))
		}
	}
	for _, tc := range []struct {
		name    string
		edit    edit
		details []string
		pods    []string // the damaged pods named
		orphan  bool     // a record's pod cannot be told
	}{
		{name: "gap", edit: func(t *testing.T, log, _ *bolt.Bucket) error {
			return log.Delete(keyOfRecord(t, log, "bad", 3))
		}, details: []string{"gap in stream: expected seq 3"}, pods: []string{"bad"}},
		{name: "missing first", edit: func(t *testing.T, log, _ *bolt.Bucket) error {
			return log.Delete(keyOfRecord(t, log, "bad", 1))
		}, details: []string{"expected seq 1"}, pods: []string{"bad"}},
		{name: "event does not decode", edit: put(2, func() []byte {
			// Its header is sound, its event is not.
			b := marshal(&pb.Envelope{SchemaVersion: SchemaVersion, Seq: 2, PodUid: "bad"})
			b = protowire.AppendTag(b, 5, protowire.BytesType)
			return protowire.AppendBytes(b, []byte{0xff, 0xff, 0xff})
		}), details: []string{"record does not decode"}, pods: []string{"bad"}},
		{name: "record of another pod", edit: put(2, func() []byte {
			return marshal(withSchema(ev("other", 2)))
		}), details: []string{`pod "bad" seq 3: gap in stream: expected seq 2`, `pod "other" seq 2: gap in stream: expected seq 1`},
			pods: []string{"bad", "other"}},
		{name: "seq repeated", edit: func(t *testing.T, log, _ *bolt.Bucket) error {
			last, _ := log.Cursor().Last()
			k := logKey(binary.BigEndian.Uint64(last) + 1)
			return log.Put(k, sealT(k, marshal(withSchema(ev("bad", 4)))))
		}, details: []string{"seq 4: seq repeated or out of order: expected seq 6"}, pods: []string{"bad"}},
		{name: "seqs out of order", edit: func(t *testing.T, log, _ *bolt.Bucket) error {
			k2, k3 := keyOfRecord(t, log, "bad", 2), keyOfRecord(t, log, "bad", 3)
			// Swapped and sealed again: checksums sound, order wrong.
			v2, v3 := bytes.Clone(log.Get(k2)[frameLen:]), bytes.Clone(log.Get(k3)[frameLen:])
			if err := log.Put(k2, sealT(k2, v3)); err != nil {
				return err
			}
			return log.Put(k3, sealT(k3, v2))
		}, details: []string{"seq 2: seq repeated or out of order: expected seq 4"}, pods: []string{"bad"}},
		{name: "unknown schema", edit: put(2, func() []byte {
			e := ev("bad", 2)
			e.SchemaVersion = 9
			return marshal(e)
		}), details: []string{"unknown schema_version 9"}, pods: []string{"bad"}},
		{name: "event not compacted", edit: func(_ *testing.T, _, snaps *bolt.Bucket) error {
			s := snapshotAt("bad", 3)
			s.SchemaVersion = SchemaVersion
			return snaps.Put([]byte("bad"), sealT([]byte("bad"), marshal(s)))
		}, details: []string{"covered by the snapshot at seq 3"}, pods: []string{"bad"}},
		{name: "undecodable snapshot", edit: func(_ *testing.T, _, snaps *bolt.Bucket) error {
			return snaps.Put([]byte("bad"), sealT([]byte("bad"), []byte{0x0a}))
		}, details: []string{"snapshot: intact record does not decode"}, pods: []string{"bad"}},
		{name: "record does not decode at all", edit: func(t *testing.T, log, _ *bolt.Bucket) error {
			return log.Put(keyOfRecord(t, log, "bad", 2), []byte{0xff, 0xff, 0xff})
		},
			details: []string{"shorter than its frame", "cannot be told which pod", `pod "bad" seq 3: gap in stream: expected seq 2`},
			pods:    []string{"bad"}, orphan: true},
		{name: "short key", edit: func(_ *testing.T, log, _ *bolt.Bucket) error {
			return log.Put([]byte("x"), []byte{})
		}, details: []string{"log key 78 is not an 8-byte record number"}, orphan: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j := openT(t, dir, testOptions(t))
			for seq := uint64(1); seq <= 5; seq++ {
				appendT(t, j, "bad", ev("bad", seq))
				appendT(t, j, "good", ev("good", seq))
			}
			closeT(t, j)
			editFile(t, dir, func(tx *bolt.Tx) error {
				return tc.edit(t, tx.Bucket(bucketLog), tx.Bucket(bucketSnapshots))
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
			t.Logf("Verify: %v", err)
			mustContain(t, err, append(tc.details, j.Path())...)
			if got := ce.PodUIDs(); !slices.Equal(got, tc.pods) {
				t.Fatalf("damaged pods %v, want %v", got, tc.pods)
			}

			for _, uid := range []string{"bad", "good"} {
				_, err := j.Load(ctx, uid)
				if damaged := tc.orphan || slices.Contains(tc.pods, uid); damaged {
					wantErrIs(t, err, ErrCorrupt)
				} else {
					wantSeqs(t, loadT(t, j, uid), uid, 1, 5)
				}
			}
			all, err := j.LoadAll(ctx)
			if !errors.As(err, &ce) || !slices.Equal(ce.PodUIDs(), tc.pods) {
				t.Fatalf("LoadAll error = %v, want a *CorruptError naming pods %v", err, tc.pods)
			}
			for _, uid := range []string{"bad", "good"} {
				if slices.Contains(tc.pods, uid) {
					if _, ok := all[uid]; ok {
						t.Fatalf("LoadAll returned the damaged pod %s", uid)
					}
					continue
				}
				if all[uid] == nil {
					t.Fatalf("LoadAll returned pods %v, not %s", keys(all), uid)
				}
				wantSeqs(t, all[uid], uid, 1, 5)
			}

			// Appends to the healthy pod go on; the read-only CLI sees the
			// same problems.
			appendT(t, j, "good", ev("good", 6))
			closeT(t, j)
			r, err := OpenReadOnly(ctx, dir, testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			mustContain(t, r.Verify(ctx), tc.details...)
		})
	}
}

// keyOfRecord finds the log key of event seq of pod uid.
func keyOfRecord(t *testing.T, log *bolt.Bucket, uid string, seq uint64) []byte {
	t.Helper()
	c := log.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var e pb.Envelope
		if len(v) < frameLen {
			continue
		}
		if err := proto.Unmarshal(v[frameLen:], &e); err == nil && e.PodUid == uid && e.Seq == seq {
			return bytes.Clone(k)
		}
	}
	t.Fatalf("no record of pod %s seq %d in the log", uid, seq)
	return nil
}

func keys(m map[string]*Stream) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Open (which checks the file and builds the index) and LoadAll of 10,000
// pods with 10 events each, as a node recovers: everything is there. The
// times are only logged; the recovery target is make bench's
// (BenchmarkRecover10k in test/bench), never a timed test.
func TestLoadAllManyPods(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 records")
	}
	const pods, events = 10000, 10
	dir := t.TempDir()
	fillJournal(t, dir, pods, events, benchRecordSize)
	start := time.Now()
	j := openT(t, dir, testOptions(t))
	opened := time.Since(start)
	t.Logf("Open of %d pods × %d events, with its consistency check and index: %v", pods, events, opened)
	if got := j.idx.records; got != pods*events {
		t.Fatalf("index holds %d records, want %d", got, pods*events)
	}
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
