package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// Schema version 1 kept one bucket per pod under "pods", its records keyed
// by their seq (8 bytes big-endian); meta and snapshots were as today:
//
//	journal.db (bbolt)
//	├── meta       "schema" → "1", "created" → RFC 3339
//	├── pods
//	│   └── <pod UID>    bucket: 00 00 00 00 00 00 00 07 → Envelope, ...
//	└── snapshots  <pod UID> → Snapshot
//
// A commit that touched k pods rewrote at least k pages, which is why the
// log layout replaced it. Its records are those of today (schema_version 1
// reads as 2), so migrating moves them without decoding their events.

// errMigrationAborted rolls back a migration that found damage.
var errMigrationAborted = errors.New("migration aborted")

// migrateV1 rewrites a schema version 1 file into the log layout, in one
// transaction: every pod's records, pod after pod in UID order and in seq
// order within a pod, go to the log under record numbers 1, 2, ...; the pods
// bucket is dropped and meta says schema 2 (and when it was migrated).
// Snapshots stay as they are. migrateV2 then frames it all.
//
// A record whose pod would be lost or changed by the move (its key is not a
// seq, or its header does not name the pod of its bucket and the seq of its
// key) makes the migration fail with a *CorruptError and change nothing:
// Open then quarantines the file. Records that are otherwise damaged move as
// they are and are reported for their pod, as before.
func migrateV1(db *bolt.DB, path string, now time.Time, log *zap.Logger) error {
	var (
		problems     []Problem
		pods, copied int
	)
	err := db.Update(func(tx *bolt.Tx) error {
		problems, pods, copied = nil, 0, 0
		podsV1 := tx.Bucket(bucketPodsV1)
		logB, err := tx.CreateBucket(bucketLog)
		if err != nil {
			return err
		}
		logB.FillPercent = logFillPercent
		next := uint64(1)
		c := podsV1.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			uid := string(k)
			if v != nil {
				problems = append(problems, Problem{PodUID: uid, Detail: "schema 1 pods bucket holds a value, not a bucket, for this pod"})
				continue
			}
			pods++
			pc := podsV1.Bucket(k).Cursor()
			for sk, sv := pc.First(); sk != nil; sk, sv = pc.Next() {
				if p := checkV1Record(uid, sk, sv); p != nil {
					problems = append(problems, *p)
					continue
				}
				// The value points into the mapping, which a growing
				// file remaps during the commit: copy it.
				if err := logB.Put(logKey(next), bytes.Clone(sv)); err != nil {
					return err
				}
				next++
				copied++
			}
		}
		if problems != nil {
			return errMigrationAborted
		}
		if err := tx.DeleteBucket(bucketPodsV1); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keySchema, []byte(strconv.Itoa(schemaUnframed))); err != nil {
			return err
		}
		return meta.Put(keyMigrated, []byte(fmt.Sprintf("from schema %d at %s", schemaPodBuckets, now.UTC().Format(time.RFC3339Nano))))
	})
	if errors.Is(err, errMigrationAborted) {
		return &CorruptError{Path: path, Problems: problems}
	}
	if err != nil {
		return fmt.Errorf("migrate journal %s from schema version %d to %d: %w", path, schemaPodBuckets, schemaUnframed, err)
	}
	log.Info("migrated journal to the log layout",
		zap.Int("fromSchema", schemaPodBuckets), zap.Int("toSchema", schemaUnframed),
		zap.Int("pods", pods), zap.Int("records", copied))
	return nil
}

// checkV1Record checks that the schema 1 record k → v of pod uid keeps its
// pod and seq in the log: its key is a seq and its header names both.
func checkV1Record(uid string, k, v []byte) *Problem {
	if len(k) != 8 {
		return &Problem{PodUID: uid, Detail: fmt.Sprintf("schema 1 key %x is not an 8-byte sequence number", k)}
	}
	seq := binary.BigEndian.Uint64(k)
	if v == nil {
		return &Problem{PodUID: uid, Seq: seq, Detail: "schema 1 key holds a bucket, not a record"}
	}
	ruid, rseq, err := readHeader(v)
	switch {
	case err != nil:
		return &Problem{PodUID: uid, Seq: seq, Detail: fmt.Sprintf("record does not decode: %v", err)}
	case string(ruid) != uid:
		return &Problem{PodUID: uid, Seq: seq, Detail: fmt.Sprintf("record has pod_uid %q", ruid)}
	case rseq != seq:
		return &Problem{PodUID: uid, Seq: seq, Detail: fmt.Sprintf("record has seq %d", rseq)}
	}
	return nil
}

// migrateV2 frames every value of a schema version 2 file with its
// checksums (frame.go), in one transaction: log records and snapshots keep
// their keys and payloads; meta values are framed, the schema becomes 3 and
// "migrated" says when. A record whose header does not decode is framed as
// it is, with a head CRC of 0: it stays a record whose pod cannot be told,
// as it was. Nothing is decoded beyond headers, so nothing is refused.
//
// The values are read first and written afterwards: bbolt cursors are not
// stable across Puts in their bucket. The transaction holds the whole file
// twice in memory at most.
func migrateV2(db *bolt.DB, path string, now time.Time, log *zap.Logger) error {
	var records, snapshots int
	err := db.Update(func(tx *bolt.Tx) error {
		records, snapshots = 0, 0
		frameAll := func(b *bolt.Bucket, isMeta bool) (int, error) {
			type kv struct{ k, v []byte }
			var out []kv
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if v == nil {
					continue // a bucket where a value belongs: Verify reports it
				}
				var uid []byte
				var seq uint64
				if !isMeta {
					if u, s, err := readHeader(v); err == nil {
						uid, seq = u, s
					}
				}
				// An undecodable header gets head CRC 0 (uid nil).
				out = append(out, kv{bytes.Clone(k), seal(k, v, uid, seq)})
			}
			for _, e := range out {
				if err := b.Put(e.k, e.v); err != nil {
					return 0, err
				}
			}
			return len(out), nil
		}
		var err error
		if records, err = frameAll(logBucket(tx), false); err != nil {
			return err
		}
		if snapshots, err = frameAll(tx.Bucket(bucketSnapshots), false); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if _, err := frameAll(meta, true); err != nil {
			return err
		}
		if err := meta.Put(keySchema, sealMeta(keySchema, strconv.Itoa(SchemaVersion))); err != nil {
			return err
		}
		prev := ""
		if v := meta.Get(keyMigrated); v != nil {
			if t, err := openMeta(keyMigrated, v); err == nil {
				prev = string(t) + "; "
			}
		}
		return meta.Put(keyMigrated, sealMeta(keyMigrated,
			fmt.Sprintf("%sfrom schema %d at %s", prev, schemaUnframed, now.UTC().Format(time.RFC3339Nano))))
	})
	if err != nil {
		return fmt.Errorf("migrate journal %s from schema version %d to %d: %w", path, schemaUnframed, SchemaVersion, err)
	}
	log.Info("migrated journal to checksummed records",
		zap.Int("fromSchema", schemaUnframed), zap.Int("toSchema", SchemaVersion),
		zap.Int("records", records), zap.Int("snapshots", snapshots))
	return nil
}
