package journal

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// testdata/journal-v1.db.gz is a schema version 1 journal written by the
// journal package of that version (commit f1224ac) with a fake clock:
//
//	a: events 1..3 and 4..5 (two calls)
//	b: events 1..6, then a snapshot at 3 (events 4..6 left)
//	c: events 1..2, then a snapshot at 2 (the snapshot alone left)
const v1Testdata = "testdata/journal-v1.db.gz"

// unpackV1 writes the schema version 1 journal into dir and returns its
// bytes.
func unpackV1(t *testing.T, dir string) []byte {
	t.Helper()
	f, err := os.Open(v1Testdata)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestOpenMigratesSchema1(t *testing.T) {
	dir := t.TempDir()
	unpackV1(t, dir)
	ctx := context.Background()

	// Read-only: refused, untouched.
	_, err := OpenReadOnly(ctx, dir, testOptions(t))
	wantErrIs(t, err, ErrSchemaVersion)
	mustContain(t, err, "schema version 1", "actorlet run")

	j := openT(t, dir, testOptions(t))
	if q := j.Quarantined(); q != nil {
		t.Fatalf("a schema 1 journal was quarantined: %v", q)
	}
	check := func(j *Journal) {
		t.Helper()
		pods, err := j.Pods(ctx)
		if err != nil || !slices.Equal(pods, []string{"a", "b", "c"}) {
			t.Fatalf("Pods = %v, %v; want [a b c]", pods, err)
		}
		a := loadT(t, j, "a")
		if a.Snapshot != nil {
			t.Fatalf("a: snapshot %v, want none", a.Snapshot)
		}
		wantSeqs(t, migrated(t, a, 5), "a", 1, 5)
		b := loadT(t, j, "b")
		if b.Snapshot.GetSeq() != 3 || b.Snapshot.GetState().GetContainers()["c"].GetAttempt() != 3 {
			t.Fatalf("b: snapshot %v, want the one at seq 3", b.Snapshot)
		}
		wantSeqs(t, migrated(t, b, 6), "b", 4, 6)
		c := loadT(t, j, "c")
		if c.Snapshot.GetSeq() != 2 || len(c.Events) != 0 {
			t.Fatalf("c: snapshot %v and seqs %v, want the snapshot at 2 alone", c.Snapshot, seqsOf(c))
		}
		if err := j.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(j)
	// The streams go on.
	appendT(t, j, "a", ev("a", 6))
	appendT(t, j, "c", ev("c", 3))
	if got := loadT(t, j, "a").Events[5].SchemaVersion; got != SchemaVersion {
		t.Fatalf("a new event has schema_version %d, want %d", got, SchemaVersion)
	}
	closeT(t, j)

	// The file is of schema 3 now, without the pods bucket.
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if got, err := openMeta(keySchema, meta.Get(keySchema)); err != nil || string(got) != "3" {
			t.Errorf("schema %q (%v) after migration, want 3", got, err)
		}
		if got, err := openMeta(keyMigrated, meta.Get(keyMigrated)); err != nil ||
			string(got) != "from schema 1 at 2025-03-04T05:06:07Z; from schema 2 at 2025-03-04T05:06:07Z" {
			t.Errorf("migrated = %q (%v)", got, err)
		}
		if tx.Bucket(bucketPodsV1) != nil {
			t.Error("the schema 1 pods bucket is still there")
		}
		return nil
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}

	r, err := OpenReadOnly(ctx, dir, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	wantSeqs(t, migrated(t, loadT(t, r, "a"), 5), "a", 1, 6)
	closeT(t, r)
	j = openT(t, dir, testOptions(t))
	wantSeqs(t, loadT(t, j, "c"), "c", 3, 3)
}

// A schema 1 record that would lose its pod in the log stops the migration;
// the file is quarantined as it was.
func TestOpenQuarantinesSchema1ThatCannotMigrate(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(pods *bolt.Bucket) error
	}{
		{"record does not decode", func(pods *bolt.Bucket) error {
			return pods.Bucket([]byte("a")).Put(seqKeyV1(2), []byte{0xff, 0xff})
		}},
		{"record of another pod", func(pods *bolt.Bucket) error {
			return pods.Bucket([]byte("a")).Put(seqKeyV1(2), pods.Bucket([]byte("b")).Get(seqKeyV1(4)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			unpackV1(t, dir)
			editFile(t, dir, func(tx *bolt.Tx) error { return tc.put(tx.Bucket(bucketPodsV1)) })
			damaged, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			j := openT(t, dir, testOptions(t))
			q := j.Quarantined()
			if q == nil {
				t.Fatal("a schema 1 journal that cannot be migrated was not quarantined")
			}
			mustContain(t, q, `pod "a" seq 2`)
			got, err := os.ReadFile(q.MovedTo)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, damaged) {
				t.Fatal("the failed migration changed the quarantined file")
			}
			if pods, err := j.Pods(context.Background()); err != nil || len(pods) != 0 {
				t.Fatalf("fresh journal has pods %v, %v", pods, err)
			}
		})
	}
}

// migrated checks that the stream's events up to seq upTo are the migrated
// ones, of schema_version 1 (moved as they were), and returns a copy of the
// stream in which they have today's version, for wantSeqs.
func migrated(t *testing.T, s *Stream, upTo uint64) *Stream {
	t.Helper()
	c := &Stream{Snapshot: s.Snapshot}
	for _, e := range s.Events {
		e = proto.Clone(e).(*pb.Envelope)
		if e.Seq <= upTo {
			if e.SchemaVersion != 1 {
				t.Fatalf("migrated event %s seq %d has schema_version %d, want 1", e.PodUid, e.Seq, e.SchemaVersion)
			}
			e.SchemaVersion = SchemaVersion
		}
		c.Events = append(c.Events, e)
	}
	return c
}

func seqKeyV1(seq uint64) []byte { return logKey(seq) } // same encoding
