package journal

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// ctxCheckEvery is how many records LoadAll and Verify read between two
// looks at their context.
const ctxCheckEvery = 4096

// Load returns the pod's snapshot and the events after it. It fails with
// ErrNotFound if nothing is stored for the pod and with a *CorruptError
// (ErrCorrupt) if a record of the pod is damaged, out of order or missing,
// or if the log holds a record whose pod cannot be told (it might be this
// pod's last). Load reads committed data only: it sees every Append that has
// returned.
//
// Load looks the pod's records up in the in-memory index and reads just
// those (and its snapshot), in one read transaction.
func (j *Journal) Load(ctx context.Context, podUID string) (*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load pod %q: %w", podUID, err)
	}
	var (
		entry   podEntry
		known   bool
		orphans []Problem
		s       *Stream
	)
	pick := func(x *podIndex) {
		if e := x.pods[podUID]; e != nil {
			entry, known = e.published(), true
		}
		orphans = x.orphans // never changed once built
	}
	err := j.viewIndexed(pick, func(tx *bolt.Tx) error {
		if orphans != nil {
			return &CorruptError{Path: j.path, Problems: slices.Clone(orphans)}
		}
		snapKey := podUID
		if entry.snapKey != "" {
			snapKey = entry.snapKey
		}
		snap := tx.Bucket(bucketSnapshots).Get([]byte(snapKey))
		if !known && snap == nil {
			return ErrNotFound
		}
		b := newStreamBuilder(podUID, true)
		switch {
		case snap != nil:
			sn := openSnapshot([]byte(snapKey), snap)
			if sn.owner != podUID {
				sn.problem = &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot under key %q is not this pod's", snapKey)}
			}
			b.setSnapshot(sn)
		case entry.hasSnap:
			b.fail(Problem{PodUID: podUID, Detail: "snapshot is missing or is not a record"})
		}
		c := tx.Bucket(bucketLog).Cursor()
		key := make([]byte, logKeyLen)
		for _, ref := range entry.recs {
			k, v := c.Seek(putLogKey(key, ref.key))
			if !bytes.Equal(k, key) || v == nil {
				b.fail(Problem{PodUID: podUID, Seq: ref.seq, Detail: fmt.Sprintf("log record #%d is missing", ref.key)})
				continue
			}
			r := readLogRecord(k, v)
			if r.fileProblem != nil || string(r.uid) != podUID || r.seq != ref.seq {
				b.fail(Problem{PodUID: podUID, Seq: ref.seq, Detail: fmt.Sprintf("log record #%d no longer holds this event", ref.key)})
				continue
			}
			b.addRecord(r)
		}
		var problems []Problem
		if s, problems = b.result(); problems != nil {
			return &CorruptError{Path: j.path, Problems: problems}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load pod %q: %w", podUID, err)
	}
	return s, nil
}

// Pods returns the sorted UIDs of the pods that have events or a snapshot.
// It reads the in-memory index only.
func (j *Journal) Pods(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list pods of journal %s: %w", j.path, err)
	}
	if j.closed.Load() {
		return nil, fmt.Errorf("list pods of journal %s: %w", j.path, ErrClosed)
	}
	j.idx.mu.RLock()
	uids := make([]string, 0, len(j.idx.pods))
	for uid := range j.idx.pods {
		uids = append(uids, uid)
	}
	j.idx.mu.RUnlock()
	slices.Sort(uids)
	return uids, nil
}

// LoadAll returns the streams of all pods, read in one transaction with one
// pass over the log: the recovery of a whole node. If some pods' records are
// damaged, LoadAll returns the streams of all other pods together with a
// *CorruptError (ErrCorrupt) whose PodUIDs names the damaged ones; the
// caller can recover the others and rebuild those from the pod sources and
// the runtime. A problem without a PodUID is a record whose pod cannot be
// told: any stream returned might lack it as its last event. On any other
// error the map is nil.
func (j *Journal) LoadAll(ctx context.Context) (map[string]*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load journal %s: %w", j.path, err)
	}
	var (
		out      map[string]*Stream
		problems []Problem
	)
	err := j.view(func(tx *bolt.Tx) error {
		builders, fileProblems, err := scanStreams(ctx, tx, true)
		if err != nil {
			return err
		}
		problems = fileProblems
		out = make(map[string]*Stream, len(builders))
		for uid, b := range builders {
			s, p := b.result()
			if p != nil {
				problems = append(problems, p...)
				continue
			}
			out[uid] = s
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load journal %s: %w", j.path, err)
	}
	if problems != nil {
		sortProblems(problems)
		return out, &CorruptError{Path: j.path, Problems: problems}
	}
	return out, nil
}

// scanStreams reads every snapshot and then the whole log in order, feeding
// each record to its pod's streamBuilder. Problems of the file (records whose
// pod cannot be told) are returned; those of pods are in their builders.
func scanStreams(ctx context.Context, tx *bolt.Tx, keep bool) (map[string]*streamBuilder, []Problem, error) {
	var problems []Problem
	builders := make(map[string]*streamBuilder)
	builder := func(uid string) *streamBuilder {
		b := builders[uid]
		if b == nil {
			b = newStreamBuilder(uid, keep)
			builders[uid] = b
		}
		return b
	}
	n := 0
	c := tx.Bucket(bucketSnapshots).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if n++; n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		sn := openSnapshot(k, v)
		b := builder(sn.owner)
		if b.stream.Snapshot != nil || b.broken {
			b.fail(Problem{PodUID: sn.owner, Detail: fmt.Sprintf("a second snapshot of this pod is stored under key %q", k)})
			b.broken = true
			continue
		}
		b.setSnapshot(sn)
	}
	var (
		prev    uint64
		started bool
	)
	c = tx.Bucket(bucketLog).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if n++; n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		r := readLogRecord(k, v)
		if r.fileProblem != nil {
			problems = append(problems, *r.fileProblem)
			continue
		}
		if r.damage == "" { // a damaged record's key may be the damage
			if started && r.key <= prev {
				problems = append(problems, Problem{Detail: fmt.Sprintf("log record #%d follows record #%d", r.key, prev)})
			}
			prev, started = r.key, true
		}
		builder(string(r.uid)).addRecord(r)
	}
	return builders, problems, nil
}

// sortProblems orders problems by pod (those of the file first), keeping the
// log order within a pod.
func sortProblems(problems []Problem) {
	slices.SortStableFunc(problems, func(a, b Problem) int { return cmp.Compare(a.PodUID, b.PodUID) })
}
