package journal

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the version of the file layout and of the records this
// build writes. It is stored in the meta bucket and in every record. Version
// 3 is the append-only log layout drawn in doc.go with every value framed
// with CRC-32C checksums (frame.go); version 2 was the same layout without
// checksums, version 1 kept a bucket per pod (see migrate.go). The protobuf
// encoding of records did not change between them: records of version 1, 2
// and 3 read alike once unframed.
const SchemaVersion = 3

// Schema versions this build knows.
const (
	// schemaPodBuckets is the first layout: a bucket per pod, keyed by seq.
	// Open migrates it; OpenReadOnly refuses it.
	schemaPodBuckets = 1
	// schemaUnframed is the log layout without checksums. Open migrates it;
	// OpenReadOnly refuses it.
	schemaUnframed = 2
	// minRecordSchema is the oldest record schema_version that reads as
	// today's.
	minRecordSchema = 1
)

// FileName is the journal's file inside its directory.
const FileName = "journal.db"

// Bucket and key names; see the layout in doc.go.
var (
	bucketMeta      = []byte("meta")
	bucketLog       = []byte("log")
	bucketSnapshots = []byte("snapshots")
	// bucketPodsV1 is schema version 1's bucket of pod buckets.
	bucketPodsV1 = []byte("pods")

	keySchema   = []byte("schema")
	keyCreated  = []byte("created")
	keyMigrated = []byte("migrated")
)

// logKeyLen is the length of a log key: the record number, big-endian.
const logKeyLen = 8

// logFillPercent packs the log densely: records are only ever added at its
// end, so a split page is never filled up later, and with the default of
// 0.5 every split would leave half of a page empty for good.
const logFillPercent = 1.0

func putLogKey(dst []byte, n uint64) []byte {
	binary.BigEndian.PutUint64(dst, n)
	return dst
}

func logKey(n uint64) []byte { return putLogKey(make([]byte, logKeyLen), n) }

func parseLogKey(k []byte) (uint64, bool) {
	if len(k) != logKeyLen {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// logBucket returns the log bucket of tx, set up for appending.
func logBucket(tx *bolt.Tx) *bolt.Bucket {
	b := tx.Bucket(bucketLog)
	if b != nil {
		b.FillPercent = logFillPercent
	}
	return b
}

// initLayout creates the buckets and the meta keys of a fresh journal.
func initLayout(tx *bolt.Tx, now time.Time) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if err := meta.Put(keySchema, sealMeta(keySchema, strconv.Itoa(SchemaVersion))); err != nil {
		return err
	}
	if err := meta.Put(keyCreated, sealMeta(keyCreated, now.UTC().Format(time.RFC3339Nano))); err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bucketLog); err != nil {
		return err
	}
	_, err = tx.CreateBucketIfNotExists(bucketSnapshots)
	return err
}

// readSchema returns the schema version stored in the meta bucket: framed
// and checksummed since version 3, plain decimal ASCII in versions 1 and 2.
func readSchema(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, fmt.Errorf("bucket %q is missing", bucketMeta)
	}
	v := meta.Get(keySchema)
	if v == nil {
		return 0, fmt.Errorf("key %s/%s is missing", bucketMeta, keySchema)
	}
	framed := len(v) > 0 && v[0] == frameMagic
	text := v
	if framed {
		var err error
		if text, err = openMeta(keySchema, v); err != nil {
			return 0, err
		}
	}
	n, err := strconv.Atoi(string(text))
	switch {
	case err != nil || n <= 0:
		return 0, fmt.Errorf("key %s/%s holds %q, not a schema version", bucketMeta, keySchema, v)
	case framed != (n > schemaUnframed):
		return 0, fmt.Errorf("key %s/%s holds schema version %d, framed %v: damaged", bucketMeta, keySchema, n, framed)
	}
	return n, nil
}

// checkMeta checks the frames of every meta value (schema version 3).
func checkMeta(tx *bolt.Tx) []Problem {
	var problems []Problem
	c := tx.Bucket(bucketMeta).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			problems = append(problems, Problem{Detail: fmt.Sprintf("meta key %q holds a bucket", k)})
			continue
		}
		if _, err := openMeta(k, v); err != nil {
			problems = append(problems, Problem{Detail: err.Error()})
		}
	}
	return problems
}

// requiredBuckets are the buckets a file of the given schema version must
// have besides meta.
func requiredBuckets(schema int) [][]byte {
	if schema == schemaPodBuckets {
		return [][]byte{bucketPodsV1, bucketSnapshots}
	}
	return [][]byte{bucketLog, bucketSnapshots}
}

// isEmptyFile reports whether the bbolt file holds no bucket at all: a file
// created by a process that died before the first commit of initLayout.
func isEmptyFile(tx *bolt.Tx) bool {
	k, _ := tx.Cursor().First()
	return k == nil
}
