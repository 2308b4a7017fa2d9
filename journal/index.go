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
	// lastKey+1. Records deleted at the end of the log leave it as it is;
	// the log bucket's sequence keeps it in the file (from this build on:
	// older files start from their largest key), so a record number is
	// never used twice (Follow's cursor is one).
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
	// snapKey is the key the pod's snapshot is stored under when it is not
	// the pod's UID: a damaged key whose snapshot's checksums name this pod.
	snapKey string
	hasSnap bool
	snapSeq uint64
	// recs are the pod's records in log order. The slice is only ever
	// appended to in place; compaction replaces it.
	recs []recRef
}

// recRef locates one record: event seq of its pod is at log key key.
type recRef struct{ seq, key uint64 }

// published returns a copy of what readers may see of the entry.
func (e *podEntry) published() podEntry {
	return podEntry{hasSnap: e.hasSnap, snapSeq: e.snapSeq, snapProblem: e.snapProblem, snapKey: e.snapKey, recs: slices.Clone(e.recs)}
}

// buildIndex reads the index from the file: every snapshot's and log
// record's frame and header (openRecord), not the records' events. A record
// whose checksum fails but whose pod can be told is indexed as its pod's:
// Load reads it again and reports it.
func buildIndex(tx *bolt.Tx) podIndex {
	x := podIndex{pods: make(map[string]*podEntry)}
	c := tx.Bucket(bucketSnapshots).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		sn := openSnapshot(k, v)
		e := x.pods[sn.owner]
		if e == nil {
			e = new(podEntry)
			x.pods[sn.owner] = e
		}
		e.hasSnap = true
		if sn.owner != string(k) {
			e.snapKey = string(k)
		}
		if sn.problem != nil {
			e.snapProblem = sn.problem.Detail
			continue
		}
		e.snapSeq, e.last = sn.seq, sn.seq
	}
	x.lastKey = tx.Bucket(bucketLog).Sequence()
	c = tx.Bucket(bucketLog).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r := readLogRecord(k, v)
		if r.key > x.lastKey {
			x.lastKey = r.key
		}
		if r.fileProblem != nil {
			x.orphans = append(x.orphans, *r.fileProblem)
			continue
		}
		e := x.pods[string(r.uid)]
		if e == nil {
			e = new(podEntry)
			x.pods[string(r.uid)] = e
		}
		e.recs = append(e.recs, recRef{seq: r.seq, key: r.key})
		e.last = r.seq
		x.records++
	}
	return x
}

// logRecord is what readLogRecord found in one log record.
type logRecord struct {
	// key is the record number, 0 if the key is not one.
	key uint64
	// uid and seq are the record's pod and seq (checked by its checksums),
	// unless fileProblem is set.
	uid []byte
	seq uint64
	// payload is the intact record's protobuf encoding; nil if damaged.
	payload []byte
	// damage says how the record of pod uid is damaged ("" if intact).
	damage string
	// fileProblem: the record's pod cannot be told.
	fileProblem *Problem
}

// readLogRecord checks the log record k → v and reads its header. A record
// whose pod cannot be told is a problem of the file (PodUID empty).
func readLogRecord(k, v []byte) logRecord {
	key, ok := parseLogKey(k)
	switch {
	case !ok:
		return logRecord{fileProblem: &Problem{Detail: fmt.Sprintf("log key %x is not an 8-byte record number", k)}}
	case v == nil:
		return logRecord{key: key, fileProblem: &Problem{Detail: fmt.Sprintf("log record #%d is a bucket, not a record", key)}}
	}
	o := openRecord(k, v)
	if !o.told {
		return logRecord{key: key, fileProblem: &Problem{Detail: fmt.Sprintf(
			"log record #%d: %s; it cannot be told which pod it belongs to, so any pod's stream may lack it",
			key, o.damage)}}
	}
	r := logRecord{key: key, uid: o.uid, seq: o.seq}
	if o.intact {
		r.payload = o.payload
	} else {
		r.damage = fmt.Sprintf("log record #%d: %s", key, o.damage)
	}
	return r
}

// storedSnapshot is what openSnapshot found in one stored snapshot.
type storedSnapshot struct {
	// owner is the pod the snapshot belongs to: the one its checksummed
	// header names if it can be told, else its key.
	owner string
	// seq and payload are set if the snapshot is intact.
	seq     uint64
	payload []byte
	problem *Problem
}

// openSnapshot checks the snapshot k → v (k is the pod UID it is stored
// under) and reads its header.
func openSnapshot(k, v []byte) storedSnapshot {
	s := storedSnapshot{owner: string(k)}
	if v == nil {
		s.problem = &Problem{PodUID: s.owner, Detail: "snapshots bucket holds a bucket, not a snapshot, for this pod"}
		return s
	}
	o := openRecord(k, v)
	switch {
	case o.told && string(o.uid) != s.owner && !o.intact:
		s.owner = string(o.uid)
		s.problem = &Problem{PodUID: s.owner, Detail: fmt.Sprintf("snapshot stored under key %q: %s", k, o.damage)}
	case !o.intact:
		s.problem = &Problem{PodUID: s.owner, Detail: "snapshot: " + o.damage}
	case string(o.uid) != s.owner:
		s.problem = &Problem{PodUID: s.owner, Detail: fmt.Sprintf("snapshot has pod_uid %q", o.uid)}
	default:
		s.seq, s.payload = o.seq, o.payload
	}
	return s
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
