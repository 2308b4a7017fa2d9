package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"
)

// churnedJournal writes a journal in dir with interleaved pods, snapshots
// and deletes, and closes it. Pod UIDs are UID-like (36 bytes).
func churnedJournal(t *testing.T, dir string) {
	t.Helper()
	j := openT(t, dir, testOptions(t))
	uid := func(i int) string { return fmt.Sprintf("0000%04d-aaaa-bbbb-cccc-dddddddddddd", i) }
	last := map[string]uint64{}
	for round := 0; round < 6; round++ {
		for i := 0; i < 8; i++ {
			u := uid(i)
			appendT(t, j, u, evs(u, last[u]+1, 3)...)
			last[u] += 3
		}
		if round%2 == 1 {
			u := uid(round)
			if err := j.SaveSnapshot(context.Background(), snapshotAt(u, last[u]-1)); err != nil {
				t.Fatal(err)
			}
		}
		if round == 4 {
			if err := j.Delete(context.Background(), uid(7)); err != nil {
				t.Fatal(err)
			}
			delete(last, uid(7))
		}
	}
	closeT(t, j)
}

// loadAllRO opens dir read-only and returns LoadAll's result and Verify's.
func loadAllRO(t *testing.T, dir string) (map[string]*Stream, error, error) {
	t.Helper()
	ctx := context.Background()
	j, err := OpenReadOnly(ctx, dir, testOptions(t))
	if err != nil {
		return nil, err, err
	}
	defer j.Close()
	m, lerr := j.LoadAll(ctx)
	return m, lerr, j.Verify(ctx)
}

func streamBytes(t *testing.T, s *Stream) []byte {
	t.Helper()
	var b []byte
	if s.Snapshot != nil {
		b, _ = marshalOpts.MarshalAppend(b, s.Snapshot)
	}
	for _, e := range s.Events {
		b, _ = marshalOpts.MarshalAppend(b, e)
	}
	return b
}

// flipValue flips one bit of the value under key in bucket (in place, with
// bbolt), or of the key itself (the value moves to the flipped key). A key
// flip onto an existing key is not made (it would be two changes): false.
func flipValue(t *testing.T, dir string, bucket, key []byte, inKey bool, bit int) (applied bool) {
	t.Helper()
	applied = true
	editFile(t, dir, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		v := bytes.Clone(b.Get(key))
		if !inKey {
			v[bit/8] ^= 1 << (bit % 8)
			return b.Put(key, v)
		}
		k := bytes.Clone(key)
		k[bit/8] ^= 1 << (bit % 8)
		if b.Get(k) != nil {
			applied = false
			return nil
		}
		if err := b.Delete(key); err != nil {
			return err
		}
		return b.Put(k, v)
	})
	return applied
}

// Every single-bit flip of a value or key of a churned journal (a seeded
// sample of 400 flips, one in eight in a key) is either
// detected — LoadAll and Verify report a problem naming the pod whose
// record it was — or leaves what LoadAll returns byte for byte the same.
// Pods not named keep exactly their streams.
func TestEverySingleBitFlipIsDetectedOrHarmless(t *testing.T) {
	dir := t.TempDir()
	churnedJournal(t, dir)
	base, err, verr := loadAllRO(t, dir)
	if err != nil || verr != nil {
		t.Fatal(err, verr)
	}
	want := map[string][]byte{}
	for uid, s := range base {
		want[uid] = streamBytes(t, s)
	}

	type target struct {
		bucket, key []byte
		owner       string
		size        int // bits of the value
	}
	var targets []target
	db, err := bolt.Open(dir+"/"+FileName, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketLog, bucketSnapshots} {
			_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
				uid, _, err := readHeader(v[frameLen:])
				if err != nil {
					t.Fatalf("%s/%x: %v", name, k, err)
				}
				targets = append(targets, target{name, bytes.Clone(k), string(uid), 8 * len(v)})
				return nil
			})
		}
		return nil
	})
	_ = db.Close()

	rng := rand.New(rand.NewPCG(11, 0))
	trials := 400
	if testing.Short() {
		trials = 80
	}
	var detected, harmless, named, untold int
	for i := 0; i < trials; i++ {
		tg := targets[rng.IntN(len(targets))]
		inKey := rng.IntN(8) == 0
		bit := rng.IntN(tg.size)
		if inKey {
			bit = rng.IntN(8 * len(tg.key))
		}
		what := fmt.Sprintf("trial %d: %s key %x (pod %s) bit %d of the key=%v", i, tg.bucket, tg.key, tg.owner, bit, inKey)
		if !flipValue(t, dir, tg.bucket, tg.key, inKey, bit) {
			i--
			continue
		}

		got, lerr, verr := loadAllRO(t, dir)
		var ce *CorruptError
		switch {
		case lerr == nil:
			if verr != nil {
				t.Fatalf("%s: Verify found %v but LoadAll nothing", what, verr)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: undetected: %d pods, want %d", what, len(got), len(want))
			}
			harmless++
		case errors.As(lerr, &ce):
			if verr == nil {
				t.Fatalf("%s: LoadAll found %v but Verify nothing", what, lerr)
			}
			detected++
			if slices.Contains(ce.PodUIDs(), tg.owner) {
				named++
			} else {
				untold++
				t.Logf("%s: the pod is not named: %v", what, lerr)
			}
			if slices.Contains(keysOf(got), tg.owner) {
				t.Fatalf("%s: the damaged pod is still returned: %v", what, lerr)
			}
		default:
			t.Fatalf("%s: %v", what, lerr)
		}
		// No pod returned differs from what was written.
		for uid, s := range got {
			if w, ok := want[uid]; !ok || !bytes.Equal(streamBytes(t, s), w) {
				t.Fatalf("%s: pod %s changed silently (err %v)", what, uid, lerr)
			}
		}
		flipValue(t, dir, tg.bucket, flippedKey(tg.key, inKey, bit), inKey, bit) // undo
	}
	t.Logf("%d flips: %d detected (%d naming the pod, %d not), %d harmless", trials, detected, named, untold, harmless)
	if untold > 0 {
		t.Errorf("%d single-bit flips were detected without naming their pod", untold)
	}
	if _, err, verr := loadAllRO(t, dir); err != nil || verr != nil {
		t.Fatalf("after undoing every flip: %v, %v", err, verr)
	}
}

func flippedKey(k []byte, inKey bool, bit int) []byte {
	if !inKey {
		return k
	}
	k = bytes.Clone(k)
	k[bit/8] ^= 1 << (bit % 8)
	return k
}

func keysOf(m map[string]*Stream) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Each layer's checksum failure is caught and named at that layer: a log
// record, a log key, a record's header (repaired to name its pod), a
// snapshot, a snapshot's key, a meta value (the file is quarantined).
func TestChecksumFailuresAreCaughtAtTheirLayer(t *testing.T) {
	const pod = "5e7a3f0c-1111-2222-3333-444455556666"
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		j := openT(t, dir, testOptions(t))
		appendT(t, j, pod, evs(pod, 1, 4)...)
		appendT(t, j, "other", evs("other", 1, 2)...)
		if err := j.SaveSnapshot(context.Background(), snapshotAt(pod, 2)); err != nil {
			t.Fatal(err)
		}
		closeT(t, j)
		return dir
	}
	logKeyOf := func(t *testing.T, dir string, seq uint64) []byte {
		var key []byte
		editFile(t, dir, func(tx *bolt.Tx) error { key = keyOfRecord(t, tx.Bucket(bucketLog), pod, seq); return nil })
		return key
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		detail string
		seq    uint64
	}{
		{"record payload", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketLog, logKeyOf(t, dir, 4), false, 8*(frameLen+20)+3)
		}, "fails its checksum (CRC-32C)", 4},
		{"record body CRC", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketLog, logKeyOf(t, dir, 3), false, 8*frameBodyAt)
		}, "fails its checksum", 3},
		{"record head CRC", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketLog, logKeyOf(t, dir, 3), false, 8*frameHeadAt+1)
		}, "head CRC is damaged", 3},
		{"record frame byte", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketLog, logKeyOf(t, dir, 3), false, 0)
		}, "frame byte", 3},
		{"pod UID in the record's header", func(t *testing.T, dir string) {
			k := logKeyOf(t, dir, 4)
			var at int
			editFile(t, dir, func(tx *bolt.Tx) error {
				at = bytes.Index(tx.Bucket(bucketLog).Get(k), []byte(pod))
				return nil
			})
			flipValue(t, dir, bucketLog, k, false, 8*(at+5))
		}, "flipped bit (repaired to name the pod)", 4},
		{"log key", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketLog, logKeyOf(t, dir, 4), true, 60)
		}, "fails its checksum", 4},
		{"snapshot", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketSnapshots, []byte(pod), false, 8*(frameLen+40))
		}, "snapshot: record fails its checksum", 0},
		{"snapshot key", func(t *testing.T, dir string) {
			flipValue(t, dir, bucketSnapshots, []byte(pod), true, 9)
		}, "snapshot stored under key", 0},
		{"sound checksums, key and value disagree", func(t *testing.T, dir string) {
			// A snapshot of pod moved under another key and sealed for it:
			// the checksums hold, the cross-check of the UID does not.
			editFile(t, dir, func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketSnapshots)
				p := bytes.Clone(b.Get([]byte(pod))[frameLen:])
				return b.Put([]byte("other"), sealT([]byte("other"), p))
			})
		}, `snapshot has pod_uid "` + pod, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := setup(t)
			tc.damage(t, dir)
			got, lerr, verr := loadAllRO(t, dir)
			wantPod := pod
			if tc.name == "sound checksums, key and value disagree" {
				wantPod = "other"
			}
			for _, err := range []error{lerr, verr} {
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("error %v, want a *CorruptError", err)
				}
				mustContain(t, err, tc.detail)
				if !slices.Contains(ce.PodUIDs(), wantPod) {
					t.Fatalf("problems %v do not name pod %s", ce.Problems, wantPod)
				}
				if tc.seq != 0 {
					mustContain(t, err, fmt.Sprintf("seq %d", tc.seq))
				}
			}
			if _, ok := got[wantPod]; ok {
				t.Fatal("the damaged pod is returned")
			}
			if wantPod == pod && got["other"] == nil {
				t.Fatalf("the undamaged pod is not returned: %v", keysOf(got))
			}
			// Load names it too, on a writable journal.
			j := openT(t, dir, testOptions(t))
			defer closeT(t, j)
			_, err := j.Load(context.Background(), wantPod)
			wantErrIs(t, err, ErrCorrupt)
			// Delete removes the damage: the pod can start afresh.
			if err := j.Delete(context.Background(), wantPod); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Load(context.Background(), wantPod); !errors.Is(err, ErrNotFound) {
				t.Fatalf("after Delete: %v", err)
			}
			if err := j.Verify(context.Background()); err != nil {
				t.Fatalf("after Delete: %v", err)
			}
		})
	}
}

// A flipped meta value (the schema version) fails its checksum: Open
// quarantines the file, OpenReadOnly refuses it.
func TestMetaChecksumFailureQuarantines(t *testing.T) {
	for _, key := range [][]byte{keySchema, keyCreated} {
		t.Run(string(key), func(t *testing.T) {
			dir := t.TempDir()
			populate(t, dir, 2, 2)
			flipValue(t, dir, bucketMeta, key, false, 8*frameLen)
			_, err := OpenReadOnly(context.Background(), dir, testOptions(t))
			wantErrIs(t, err, ErrCorrupt)
			mustContain(t, err, fmt.Sprintf("meta value %q fails its checksum", key))
			j := openT(t, dir, testOptions(t))
			defer closeT(t, j)
			if q := j.Quarantined(); q == nil {
				t.Fatal("not quarantined")
			}
		})
	}
}

// A schema 2 file (unframed) is migrated: every record keeps its content.
func TestOpenMigratesSchema2(t *testing.T) {
	dir := t.TempDir()
	churnedJournal(t, dir)
	before, err, _ := loadAllRO(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	// Unframe everything back to schema 2.
	editFile(t, dir, func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketLog, bucketSnapshots, bucketMeta} {
			b := tx.Bucket(name)
			type kv struct{ k, v []byte }
			var all []kv
			_ = b.ForEach(func(k, v []byte) error {
				all = append(all, kv{bytes.Clone(k), bytes.Clone(v[frameLen:])})
				return nil
			})
			for _, e := range all {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte("2"))
	})
	_, err = OpenReadOnly(context.Background(), dir, testOptions(t))
	wantErrIs(t, err, ErrSchemaVersion)
	closeT(t, openT(t, dir, testOptions(t)))
	after, err, verr := loadAllRO(t, dir)
	if err != nil || verr != nil {
		t.Fatal(err, verr)
	}
	if len(after) != len(before) {
		t.Fatalf("%d pods after migration, %d before", len(after), len(before))
	}
	for uid, s := range before {
		if !bytes.Equal(streamBytes(t, after[uid]), streamBytes(t, s)) {
			t.Fatalf("pod %s changed by the migration", uid)
		}
		if s.Snapshot != nil && !proto.Equal(s.Snapshot, after[uid].Snapshot) {
			t.Fatalf("pod %s: snapshot changed", uid)
		}
	}
}

// Single-bit flips anywhere in the pages of a churned journal file (not
// through bbolt: in the bytes on disk, as a disk would damage them) are
// either caught by bbolt's page checks (OpenReadOnly fails with ErrCorrupt:
// the quarantine path of Open), or reported by LoadAll and Verify, or change
// nothing LoadAll returns. No trial may change a pod silently.
func TestFileBitFlipsNeverChangeAPodSilently(t *testing.T) {
	dir := t.TempDir()
	churnedJournal(t, dir)
	path := dir + "/" + FileName
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base, err, _ := loadAllRO(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for uid, s := range base {
		want[uid] = streamBytes(t, s)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	var refused, reported, same int
	for i := 0; i < trials; i++ {
		data := bytes.Clone(pristine)
		// Skip the two meta pages (4 KiB each): bbolt checksums them.
		bit := 8*8192 + rng.IntN(8*(len(data)-8192))
		data[bit/8] ^= 1 << (bit % 8)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("trial %d: bit %d (page %d)", i, bit, bit/8/4096)
		got, lerr, verr := loadAllRO(t, dir)
		var ce *CorruptError
		switch {
		case got == nil && errors.Is(lerr, ErrCorrupt):
			refused++
			continue
		case lerr == nil:
			same++
			if verr != nil {
				// Verify may see what LoadAll does not read (free pages
				// that bbolt's check finds inconsistent): fine, as long
				// as nothing read changed.
				reported++
			}
		case errors.As(lerr, &ce):
			reported++
		default:
			t.Fatalf("%s: %v", what, lerr)
		}
		for uid, s := range got {
			if w, ok := want[uid]; !ok || !bytes.Equal(streamBytes(t, s), w) {
				t.Fatalf("%s: pod %s changed silently (LoadAll: %v)", what, uid, lerr)
			}
		}
		if lerr == nil && len(got) != len(want) {
			t.Fatalf("%s: %d pods returned without an error, want %d", what, len(got), len(want))
		}
	}
	t.Logf("%d flips in the file's pages: %d refused by bbolt's checks, %d reported, %d left LoadAll's result as it was",
		trials, refused, reported, same)
}
