package journal

import (
	"errors"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// errNothingWritten rolls back a transaction in which every request was
// rejected.
var errNothingWritten = errors.New("nothing written")

// runWriter is the journal's only writer: it takes everything pending (up to
// MaxBatch envelopes), commits it in one transaction — one fsync for many
// pods — and wakes the batch's callers; after a batch of pipelineMin
// requests or more it takes the next once half of them have woken (see
// wake.go). It returns when the queue is closed and drained.
func (j *Journal) runWriter() {
	defer close(j.writerDone)
	// Faults on the mapping of a damaged file become panics (see guard).
	debug.SetPanicOnFault(true)
	var batch []*request
	for {
		var ok bool
		batch, ok = j.queue.take(j.opts.MaxBatch, batch)
		if !ok {
			return
		}
		if batch[0].kind == kindVerify {
			batch[0].err = j.verifyInWriter(batch[0].ctx)
		} else {
			j.commit(batch)
		}
		half := wakeBatch(batch)
		clear(batch)
		if half != nil {
			<-half // see wake.go
		}
	}
}

// commit writes a batch in one transaction and sets each request's outcome:
// its own rejection (ErrSequence, ...) if it was refused — it then wrote
// nothing — or else the transaction's outcome. The caller then wakes the
// batch.
//
// The transaction stages its changes to the index (see staging); once it has
// committed they are published before any request is answered, so a Load
// that starts after an Append returned finds its records. A batch that only
// appends publishes after its commit: a reader that looks at the index in
// between reads a file that holds more than the index says, which is
// harmless. A batch with a snapshot or a delete removes records and
// snapshots, so it holds the index write-locked from before its transaction
// until it has published: readers (viewIndexed) never pair the index from
// before it with the file from after it.
func (j *Journal) commit(batch []*request) {
	if j.opts.beforeCommit != nil {
		j.opts.beforeCommit(len(batch))
	}
	exclusive := false
	for _, r := range batch {
		if r.kind != kindAppend {
			exclusive = true
			break
		}
	}
	if exclusive {
		j.idx.mu.Lock()
	}
	// Outcomes: a refused request gets its rejection here; the others keep
	// a nil err unless the transaction fails.
	var wrote, rejected, records, bytes int
	settle := func(r *request, rej error) {
		if rej != nil {
			r.err = rej
			rejected++
			return
		}
		wrote++
		if r.kind == kindAppend {
			records += r.records
		}
		for _, rec := range r.recs {
			bytes += len(rec)
		}
	}
	s := &j.staging
	s.begin(&j.idx.podIndex, exclusive) // before: rollback must not see the last batch's
	start := j.opts.Clock.Now()
	var txErr error
	if !exclusive {
		// Stage the whole batch before the transaction, in one loop: the
		// requests, their pods' entries and their records are independent
		// of each other, so the cache misses of one overlap those of the
		// next, and the transaction only puts what was staged, as a bare
		// group commit would.
		for _, r := range batch {
			settle(r, s.stageAppend(r))
		}
		if wrote > 0 {
			txErr = j.guardedUpdate(func(tx *bolt.Tx) error {
				log := logBucket(tx)
				for _, p := range s.puts {
					if err := log.Put(p.key, p.rec); err != nil {
						return fmt.Errorf("%s: %w", p.describe(), err)
					}
				}
				return keepLastKey(log, s.next-1)
			})
		}
	} else {
		txErr = j.guardedUpdate(func(tx *bolt.Tx) error {
			w := writeTx{log: logBucket(tx), snaps: tx.Bucket(bucketSnapshots), s: s}
			for _, r := range batch {
				rej, err := w.apply(r)
				if err != nil {
					return fmt.Errorf("pod %q: %w", r.uid, err)
				}
				settle(r, rej)
			}
			if wrote == 0 {
				return errNothingWritten
			}
			return keepLastKey(w.log, s.next-1)
		})
	}
	j.stats.commitNanos.Add(int64(j.opts.Clock.Since(start)))
	if errors.Is(txErr, errNothingWritten) {
		txErr = nil
	}
	switch {
	case txErr != nil || wrote == 0:
		s.rollback()
	case exclusive:
		s.publish()
	default:
		j.idx.mu.Lock()
		s.publish()
		j.idx.mu.Unlock()
	}
	if exclusive {
		j.idx.mu.Unlock()
	}

	if txErr != nil {
		j.stats.failedCommits.Add(1)
		j.log.Error("journal commit failed; failing every request of the batch",
			zap.Int("requests", len(batch)), zap.Error(txErr))
		txErr = fmt.Errorf("commit to journal %s: %w", j.path, txErr)
	} else if wrote > 0 {
		j.stats.recordCommit(wrote, records, bytes, !j.opts.NoSync)
		j.commits.committed()
	}
	if txErr != nil {
		for _, r := range batch {
			if r.err == nil {
				r.err = txErr
			}
		}
	}
	if rejected > 0 {
		j.stats.rejected.Add(uint64(rejected))
	}
}

// guardedUpdate runs fn in a write transaction; a bbolt panic (damaged page)
// fails the transaction with a *CorruptError instead of the process.
func (j *Journal) guardedUpdate(fn func(tx *bolt.Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			j.log.Error("bbolt panicked in a journal write; failing the batch",
				zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			err = &CorruptError{Path: j.path, Problems: []Problem{{Detail: fmt.Sprintf("bbolt panicked: %v", r)}}}
		}
	}()
	return j.db.Update(fn)
}

// writeTx applies requests within one write transaction. Every record goes
// to the end of the log under the next record number; the sequence checks
// read the index as staged by the batch so far, not the file.
type writeTx struct {
	log, snaps *bolt.Bucket
	s          *staging
}

// apply performs one request. rejected is the request's own failure (it then
// changed nothing: sequence mismatch, damaged stored snapshot of its pod);
// err is a failure of the transaction, which must abort.
func (w writeTx) apply(r *request) (rejected, err error) {
	switch r.kind {
	case kindAppend:
		return w.append(r)
	case kindSnapshot:
		return w.snapshot(r)
	case kindDelete:
		if r.ifLast {
			e := w.s.entry(r.uid)
			if last := w.s.lastSeq(e); e == nil || last != r.first {
				return fmt.Errorf("delete pod %q at seq %d: its stream ends at seq %d now: %w",
					r.uid, r.first, last, ErrSequence), nil
			}
		}
		return nil, w.delete(r)
	}
	return nil, fmt.Errorf("unknown request kind %d", r.kind)
}

func (w writeTx) append(r *request) (rejected, err error) {
	from := len(w.s.puts)
	if rej := w.s.stageAppend(r); rej != nil {
		return rej, nil
	}
	for _, p := range w.s.puts[from:] {
		if err := w.log.Put(p.key, p.rec); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// keepLastKey stores the largest record number used in the log's sequence,
// so that numbers are never used again, also after a restart (Follow's
// cursor is one).
func keepLastKey(log *bolt.Bucket, last uint64) error {
	if last > log.Sequence() {
		return log.SetSequence(last)
	}
	return nil
}

func (w writeTx) snapshot(r *request) (rejected, err error) {
	e := w.s.entry(r.uid)
	if e != nil && e.snapProblem != "" {
		return fmt.Errorf("snapshot of pod %q: %w: %s", r.uid, ErrCorrupt, e.snapProblem), nil
	}
	last, cur := w.s.lastSeq(e), uint64(0)
	if e != nil {
		cur = e.snapSeq
	}
	if r.first > last || r.first < cur {
		return fmt.Errorf("snapshot of pod %q at seq %d: stored events end at seq %d and the stored snapshot is at seq %d: %w",
			r.uid, r.first, last, cur, ErrSequence), nil
	}
	if err := w.snaps.Put([]byte(r.uid), r.recs[0]); err != nil {
		return nil, err
	}
	// Compact: delete the records the snapshot covers. (e is not nil: the
	// pod has a seq >= 1.)
	return nil, w.deleteRecords(w.s.compact(r.uid, e, r.first))
}

func (w writeTx) delete(r *request) error {
	keys, snapKey := w.s.remove(r.uid)
	if err := w.deleteRecords(keys); err != nil {
		return err
	}
	if snapKey != "" && snapKey != r.uid {
		// A damaged snapshot key that its checksums tell is this pod's.
		if err := w.snaps.Delete([]byte(snapKey)); err != nil {
			return err
		}
	}
	return w.snaps.Delete([]byte(r.uid))
}

func (w writeTx) deleteRecords(keys []uint64) error {
	k := make([]byte, logKeyLen)
	for _, n := range keys {
		if err := w.log.Delete(putLogKey(k, n)); err != nil {
			return err
		}
	}
	return nil
}
