package journal

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the version of the file layout and of the records this
// build writes. It is stored in the meta bucket and in every record.
const SchemaVersion = 1

// FileName is the journal's file inside its directory.
const FileName = "journal.db"

// Bucket and key names; see the layout in doc.go.
var (
	bucketMeta      = []byte("meta")
	bucketPods      = []byte("pods")
	bucketSnapshots = []byte("snapshots")

	keySchema  = []byte("schema")
	keyCreated = []byte("created")
)

// seqKeyLen is the length of an event key: the seq, big-endian.
const seqKeyLen = 8

// podFillPercent packs pod buckets densely: their keys only ever grow, so a
// split page is never filled up later.
const podFillPercent = 0.9

func putSeqKey(dst []byte, seq uint64) []byte {
	binary.BigEndian.PutUint64(dst, seq)
	return dst
}

func seqKey(seq uint64) []byte { return putSeqKey(make([]byte, seqKeyLen), seq) }

func parseSeqKey(k []byte) (uint64, bool) {
	if len(k) != seqKeyLen {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// initLayout creates the buckets and the meta keys of a fresh journal.
func initLayout(tx *bolt.Tx, now time.Time) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if err := meta.Put(keySchema, []byte(strconv.Itoa(SchemaVersion))); err != nil {
		return err
	}
	if err := meta.Put(keyCreated, []byte(now.UTC().Format(time.RFC3339Nano))); err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bucketPods); err != nil {
		return err
	}
	_, err = tx.CreateBucketIfNotExists(bucketSnapshots)
	return err
}

// readSchema returns the schema version stored in the meta bucket.
func readSchema(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, fmt.Errorf("bucket %q is missing", bucketMeta)
	}
	v := meta.Get(keySchema)
	if v == nil {
		return 0, fmt.Errorf("key %s/%s is missing", bucketMeta, keySchema)
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("key %s/%s holds %q, not a schema version", bucketMeta, keySchema, v)
	}
	return n, nil
}

// isEmptyFile reports whether the bbolt file holds no bucket at all: a file
// created by a process that died before the first commit of initLayout.
func isEmptyFile(tx *bolt.Tx) bool {
	k, _ := tx.Cursor().First()
	return k == nil
}
