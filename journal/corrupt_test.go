package journal

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// populate writes a journal with pods × events in dir and closes it.
func populate(t *testing.T, dir string, pods, events int) {
	t.Helper()
	opts := testOptions(t)
	opts.NoSync = true
	j := openT(t, dir, opts)
	for p := range pods {
		uid := fmt.Sprintf("pod-%04d", p)
		appendT(t, j, uid, evs(uid, 1, events)...)
	}
	closeT(t, j)
}

// damage rewrites the journal file in dir with f.
func damage(t *testing.T, dir string, f func(data []byte) []byte) []byte {
	t.Helper()
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = f(data)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// wantQuarantined opens the damaged journal in dir (whose content is
// damaged) and checks it was moved aside intact and replaced by a working
// empty journal.
func wantQuarantined(t *testing.T, dir string, damaged []byte) {
	t.Helper()
	ctx := context.Background()

	// Read-only: reported, not moved.
	_, err := OpenReadOnly(ctx, dir, testOptions(t))
	wantErrIs(t, err, ErrCorrupt)
	if q := quarantinedFiles(t, dir); q != nil {
		t.Fatalf("OpenReadOnly moved the file: %v", q)
	}

	j := openT(t, dir, testOptions(t))
	q := j.Quarantined()
	if q == nil {
		t.Fatal("Open of a damaged journal did not quarantine it")
	}
	t.Logf("quarantined: %v", q)
	wantMovedTo := filepath.Join(dir, FileName+".corrupt-20250304T050607Z")
	if q.MovedTo != wantMovedTo || q.Path != j.Path() || !q.At.Equal(testTime) {
		t.Fatalf("quarantine %+v, want moved to %s", q, wantMovedTo)
	}
	wantErrIs(t, q, ErrCorrupt)
	got, err := os.ReadFile(q.MovedTo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, damaged) {
		t.Fatal("the quarantined file's content changed")
	}
	if fi, err := os.Stat(q.MovedTo); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("quarantined file: %v, %v", fi, err)
	}

	// The fresh journal is empty and works.
	pods, err := j.Pods(ctx)
	if err != nil || len(pods) != 0 {
		t.Fatalf("fresh journal has pods %v, %v", pods, err)
	}
	appendT(t, j, "p", evs("p", 1, 2)...)
	wantSeqs(t, loadT(t, j, "p"), "p", 1, 2)
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	closeT(t, j)
	j = openT(t, dir, testOptions(t))
	if j.Quarantined() != nil {
		t.Fatalf("the fresh journal was quarantined on reopen: %v", j.Quarantined())
	}
}

func TestOpenQuarantinesGarbage(t *testing.T) {
	dir := t.TempDir()
	garbage := make([]byte, 64<<10)
	if _, err := rand.Read(garbage); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	wantQuarantined(t, dir, garbage)
}

func TestOpenQuarantinesShortGarbage(t *testing.T) {
	dir := t.TempDir()
	garbage := []byte("not a journal\n")
	if err := os.WriteFile(filepath.Join(dir, FileName), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	wantQuarantined(t, dir, garbage)
}

func TestOpenQuarantinesTruncatedFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep func(fileSize, inUse int) int
	}{
		{"half", func(fileSize, _ int) int { return fileSize / 2 }},
		{"last pages in use", func(_, inUse int) int { return inUse - 2*pageSize }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			populate(t, dir, 300, 10)
			inUse := highWaterMark(t, dir)
			damaged := damage(t, dir, func(data []byte) []byte {
				keep := tc.keep(len(data), inUse)
				t.Logf("file of %d bytes with %d in use: keeping %d", len(data), inUse, keep)
				return data[:keep]
			})
			wantQuarantined(t, dir, damaged)
		})
	}
}

// highWaterMark is the size of the pages in use in the journal file in dir
// (bbolt grows the file ahead of them).
func highWaterMark(t *testing.T, dir string) int {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	return int(tx.Size())
}

// pageSize is bbolt's default page size, which these tests' files use.
var pageSize = os.Getpagesize()

func TestOpenQuarantinesFlippedMetaPages(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir, 10, 10)
	damaged := damage(t, dir, func(data []byte) []byte {
		// Flip bytes in both meta pages (pages 0 and 1): their checksums
		// no longer match.
		for _, off := range []int{64, pageSize + 64} {
			data[off] ^= 0xff
			data[off+1] ^= 0x5a
		}
		return data
	})
	wantQuarantined(t, dir, damaged)
}

func TestOpenQuarantinesTrashedDataPages(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir, 50, 10)
	damaged := damage(t, dir, func(data []byte) []byte {
		// Overwrite the header (id, flags, count) of every page after the
		// meta pages: no branch, leaf or freelist page is recognizable.
		for off := 2 * pageSize; off+16 <= len(data); off += pageSize {
			copy(data[off:off+12], "\xde\xad\xbe\xef\xde\xad\xbe\xef\xff\xff\x7f\x7f")
		}
		return data
	})
	wantQuarantined(t, dir, damaged)
}

// One damaged page: the bbolt check at Open finds it.
func TestOpenQuarantinesOneBadPage(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir, 200, 10)
	var root uint64
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(bucketLog).RootPage())
		return nil
	})
	_ = db.Close()
	if err != nil || root == 0 {
		t.Fatalf("root page of the log: %d, %v", root, err)
	}
	damaged := damage(t, dir, func(data []byte) []byte {
		off := int(root) * pageSize
		data[off+8] = 0x33 // page flags: no such page type
		return data
	})
	wantQuarantined(t, dir, damaged)
}

func TestOpenQuarantinesMissingSchema(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir, 1, 1)
	editFile(t, dir, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keySchema) })
	damaged, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	wantQuarantined(t, dir, damaged)
}

// Two quarantines in the same second keep both files.
func TestQuarantineNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	for i := range 3 {
		if err := os.WriteFile(path, []byte(fmt.Sprintf("garbage %d", i)), 0o600); err != nil {
			t.Fatal(err)
		}
		j := openT(t, dir, testOptions(t))
		if j.Quarantined() == nil {
			t.Fatalf("round %d: not quarantined", i)
		}
		closeT(t, j)
	}
	for i, name := range []string{".corrupt-20250304T050607Z", ".corrupt-20250304T050607Z.1", ".corrupt-20250304T050607Z.2"} {
		got, err := os.ReadFile(path + name)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("garbage %d", i); string(got) != want {
			t.Fatalf("%s holds %q, want %q", name, got, want)
		}
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir, 1, 1)
	editFile(t, dir, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, sealMeta(keySchema, strconv.Itoa(SchemaVersion+1)))
	})
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), dir, testOptions(t))
	wantErrIs(t, err, ErrSchemaVersion)
	mustContain(t, err, fmt.Sprintf("schema version %d", SchemaVersion+1), dir)
	if errors.Is(err, ErrCorrupt) {
		t.Fatalf("a newer schema is not corruption: %v", err)
	}
	_, err = OpenReadOnly(context.Background(), dir, testOptions(t))
	wantErrIs(t, err, ErrSchemaVersion)
	if q := quarantinedFiles(t, dir); q != nil {
		t.Fatalf("a newer journal was quarantined: %v", q)
	}
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("refusing a newer journal changed its file")
	}
}

// A bbolt file without any bucket (its creator died before the first
// commit) is initialized, not quarantined.
func TestEmptyBoltFileIsInitialized(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = OpenReadOnly(context.Background(), dir, testOptions(t))
	wantErrIs(t, err, ErrNotFound)

	j := openT(t, dir, testOptions(t))
	if j.Quarantined() != nil {
		t.Fatal(j.Quarantined())
	}
	appendT(t, j, "p", ev("p", 1))
	if err := j.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// editFile changes the journal file in dir directly with bbolt.
func editFile(t *testing.T, dir string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
