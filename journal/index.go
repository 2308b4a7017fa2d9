package journal

import (
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// index is the journal's map of its log, in memory: for every pod, the log
// keys of its records in order and its snapshot's seq. Open builds it with
// one scan of the file (buildIndex); the writer keeps it up to date, so that
// an Append's sequence check and a Load's lookup read nothing from the file.
//
// The writer goroutine is the only one that changes it: it reads it without
// locking and changes what readers see with mu write-locked, after the
// transaction that made the change committed (for appends), or holding mu
// across that transaction (for snapshots and deletes, which remove records);
// see staging and Journal.commit. Other goroutines read it with mu
// read-locked and copy what they keep.
type index struct {
	mu sync.RWMutex
	podIndex
}

// podIndex is the content of an index.
type podIndex struct {
	// pods holds an entry for every pod with records or a snapshot.
	pods map[string]*podEntry
	// orphans are the records whose pod cannot be told (their key or
	// header does not parse), as file-level problems. They are found when
	// the index is built; nothing removes them.
	orphans []Problem
	// records is the number of records in pods.
	records int
	// lastKey is the largest log key used, 0 if none: the next record is
	// lastKey+1. Records deleted at the end of the log leave it as it is
	// while the journal is open; Open derives it from the file, so their
	// numbers may be used again after a restart (keys only need to grow in
	// commit order).
	lastKey uint64
}

// podEntry is what the index knows of one pod. The writer's own fields come
// first, to share a cache line: it reads them for every append, and readers
// never touch them (they copy the other fields, see published).
type podEntry struct {
	// last is the seq of the pod's last record in log order, else its
	// snapshot's seq, else 0: what the next Append must follow.
	last uint64
	// batch is the last batch that touched the entry; if that is the batch
	// being committed and it only appends, pendingLast is the seq the pod
	// ends at with that batch's records.
	batch       uint64
	pendingLast uint64

	// snapProblem, if not empty, says why the stored snapshot's seq cannot
	// be read; writes to the pod (other than Delete) are refused.
	snapProblem string
	hasSnap     bool
	snapSeq     uint64
	// recs are the pod's records in log order. The slice is only ever
	// appended to in place; compaction replaces it.
	recs []recRef
}

// recRef locates one record: event seq of its pod is at log key key.
type recRef struct{ seq, key uint64 }

// published returns a copy of what readers may see of the entry.
func (e *podEntry) published() podEntry {
	return podEntry{hasSnap: e.hasSnap, snapSeq: e.snapSeq, snapProblem: e.snapProblem, recs: slices.Clone(e.recs)}
}

// buildIndex reads the index from the file: every snapshot's seq and every
// log record's header (readHeader), not the records' events.
func buildIndex(tx *bolt.Tx) podIndex {
	x := podIndex{pods: make(map[string]*podEntry)}
	c := tx.Bucket(bucketSnapshots).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		e := &podEntry{hasSnap: true}
		x.pods[string(k)] = e
		if v == nil {
			e.snapProblem = "snapshots bucket holds a bucket, not a snapshot"
			continue
		}
		uid, seq, err := readHeader(v)
		switch {
		case err != nil:
			e.snapProblem = fmt.Sprintf("snapshot header does not decode: %v", err)
		case string(uid) != string(k):
			e.snapProblem = fmt.Sprintf("snapshot has pod_uid %q", uid)
		default:
			e.snapSeq, e.last = seq, seq
		}
	}
	c = tx.Bucket(bucketLog).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		key, uid, seq, p := readLogRecord(k, v)
		if key > x.lastKey {
			x.lastKey = key
		}
		if p != nil {
			x.orphans = append(x.orphans, *p)
			continue
		}
		e := x.pods[string(uid)]
		if e == nil {
			e = new(podEntry)
			x.pods[string(uid)] = e
		}
		e.recs = append(e.recs, recRef{seq: seq, key: key})
		e.last = seq
		x.records++
	}
	return x
}

// readLogRecord parses the key and header of the log record k → v. A record
// whose pod cannot be told is a problem of the file (PodUID empty). key is 0
// if k is not a record number.
func readLogRecord(k, v []byte) (key uint64, uid []byte, seq uint64, p *Problem) {
	key, ok := parseLogKey(k)
	switch {
	case !ok:
		return 0, nil, 0, &Problem{Detail: fmt.Sprintf("log key %x is not an 8-byte record number", k)}
	case v == nil:
		return key, nil, 0, &Problem{Detail: fmt.Sprintf("log record #%d is a bucket, not a record", key)}
	}
	uid, seq, err := readHeader(v)
	if err != nil {
		return key, nil, 0, &Problem{Detail: fmt.Sprintf(
			"log record #%d does not decode (%v); it cannot be told which pod it belongs to, so any pod's stream may lack it",
			key, err)}
	}
	return key, uid, seq, nil
}

// diff describes how x differs from y (the index built from the file), ""
// if they are equal.
func (x *podIndex) diff(y *podIndex) string {
	if len(x.pods) != len(y.pods) {
		return fmt.Sprintf("%d pods in memory, %d in the file", len(x.pods), len(y.pods))
	}
	for uid, a := range x.pods {
		b := y.pods[uid]
		switch {
		case b == nil:
			return fmt.Sprintf("pod %q is in memory but not in the file", uid)
		case a.last != b.last:
			return fmt.Sprintf("pod %q: last seq %d in memory, %d in the file", uid, a.last, b.last)
		case a.hasSnap != b.hasSnap || a.snapSeq != b.snapSeq || a.snapProblem != b.snapProblem:
			return fmt.Sprintf("pod %q: snapshot (%v, seq %d) in memory, (%v, seq %d) in the file",
				uid, a.hasSnap, a.snapSeq, b.hasSnap, b.snapSeq)
		case !slices.Equal(a.recs, b.recs):
			return fmt.Sprintf("pod %q: records (seq, key) %v in memory, %v in the file", uid, a.recs, b.recs)
		}
	}
	switch {
	case len(x.orphans) != len(y.orphans):
		return fmt.Sprintf("%d unreadable records in memory, %d in the file", len(x.orphans), len(y.orphans))
	case x.records != y.records:
		return fmt.Sprintf("%d records in memory, %d in the file", x.records, y.records)
	case x.lastKey < y.lastKey:
		// Larger in memory after records at the end were deleted.
		return fmt.Sprintf("the next record number is %d but the file holds record #%d", x.lastKey+1, y.lastKey)
	}
	return ""
}
