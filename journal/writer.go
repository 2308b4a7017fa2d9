package journal

import (
	"errors"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// errNothingWritten rolls back a transaction in which every request was
// rejected.
var errNothingWritten = errors.New("nothing written")

// runWriter is the journal's only writer: it takes everything pending (up to
// MaxBatch envelopes), commits it in one transaction — one fsync for many
// pods — and answers each request. It returns when the queue is closed and
// drained.
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
		// Claim the requests; those whose callers gave up are dropped.
		n := 0
		for _, r := range batch {
			if r.state.CompareAndSwap(stateQueued, stateTaken) {
				batch[n] = r
				n++
			}
		}
		clear(batch[n:])
		batch = batch[:n]
		if len(batch) == 0 {
			continue
		}
		if batch[0].kind == kindVerify {
			batch[0].done <- j.verifyInWriter(batch[0].ctx)
			continue
		}
		j.commit(batch)
	}
}

// commit writes a batch in one transaction and answers each request: with
// its own rejection (ErrSequence, ...) if it was refused — it then wrote
// nothing — or else with the transaction's outcome.
func (j *Journal) commit(batch []*request) {
	if j.opts.beforeCommit != nil {
		j.opts.beforeCommit(len(batch))
	}
	rejected := make([]error, len(batch))
	var wrote, records, bytes int
	txErr := j.guardedUpdate(func(tx *bolt.Tx) error {
		wrote, records, bytes = 0, 0, 0
		w := writeTx{pods: tx.Bucket(bucketPods), snaps: tx.Bucket(bucketSnapshots)}
		for i, r := range batch {
			rej, err := w.apply(r)
			if err != nil {
				return fmt.Errorf("pod %q: %w", r.uid, err)
			}
			rejected[i] = rej
			if rej == nil {
				wrote++
				if r.kind == kindAppend {
					records += len(r.recs)
				}
				bytes += r.size
			}
		}
		if wrote == 0 {
			return errNothingWritten
		}
		return nil
	})
	if errors.Is(txErr, errNothingWritten) {
		txErr = nil
	}

	if txErr != nil {
		j.stats.failedCommits.Add(1)
		j.log.Error("journal commit failed; failing every request of the batch",
			zap.Int("requests", len(batch)), zap.Error(txErr))
		txErr = fmt.Errorf("commit to journal %s: %w", j.path, txErr)
	} else if wrote > 0 {
		j.stats.recordCommit(wrote, records, bytes, !j.opts.NoSync)
	}
	for i, r := range batch {
		switch {
		case rejected[i] != nil:
			j.stats.rejected.Add(1)
			r.done <- rejected[i]
		default:
			r.done <- txErr
		}
		batch[i] = nil
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

// writeTx applies requests within one write transaction.
type writeTx struct {
	pods, snaps *bolt.Bucket
}

// apply performs one request. rejected is the request's own failure (it then
// changed nothing: sequence mismatch, damaged stored records of its pod); err
// is a failure of the transaction, which must abort.
func (w writeTx) apply(r *request) (rejected, err error) {
	switch r.kind {
	case kindAppend:
		return w.append(r)
	case kindSnapshot:
		return w.snapshot(r)
	case kindDelete:
		return nil, w.delete(r)
	}
	return nil, fmt.Errorf("unknown request kind %d", r.kind)
}

func (w writeTx) append(r *request) (rejected, err error) {
	uid := []byte(r.uid)
	events := w.pods.Bucket(uid)
	last, err := w.lastSeq(uid, events)
	if err != nil {
		return fmt.Errorf("append to pod %q: %w", r.uid, err), nil
	}
	if r.first != last+1 {
		return fmt.Errorf("append to pod %q: first seq %d does not follow the stored seq %d: %w",
			r.uid, r.first, last, ErrSequence), nil
	}
	if events == nil {
		if events, err = w.pods.CreateBucket(uid); err != nil {
			return nil, err
		}
	}
	events.FillPercent = podFillPercent
	// bbolt keeps key and value slices until the commit: one key buffer
	// for the request.
	keys := make([]byte, seqKeyLen*len(r.recs))
	for i, rec := range r.recs {
		k := putSeqKey(keys[i*seqKeyLen:(i+1)*seqKeyLen], r.first+uint64(i))
		if err := events.Put(k, rec); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (w writeTx) snapshot(r *request) (rejected, err error) {
	uid := []byte(r.uid)
	events := w.pods.Bucket(uid)
	last, err := w.lastSeq(uid, events)
	if err != nil {
		return fmt.Errorf("snapshot of pod %q: %w", r.uid, err), nil
	}
	cur, err := w.snapshotSeq(uid)
	if err != nil {
		return fmt.Errorf("snapshot of pod %q: %w", r.uid, err), nil
	}
	if r.snap.Seq > last || r.snap.Seq < cur {
		return fmt.Errorf("snapshot of pod %q at seq %d: stored events end at seq %d and the stored snapshot is at seq %d: %w",
			r.uid, r.snap.Seq, last, cur, ErrSequence), nil
	}
	if err := w.snaps.Put(uid, r.recs[0]); err != nil {
		return nil, err
	}
	if events == nil {
		return nil, nil
	}
	// Compact: delete the events the snapshot covers.
	first, _ := events.Cursor().First()
	from, ok := parseSeqKey(first)
	if !ok {
		return nil, nil
	}
	for seq := from; seq <= r.snap.Seq; seq++ {
		if err := events.Delete(seqKey(seq)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (w writeTx) delete(r *request) error {
	uid := []byte(r.uid)
	if err := w.pods.DeleteBucket(uid); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
		return err
	}
	return w.snaps.Delete(uid)
}

// lastSeq is the seq of the pod's last stored event: the last key of its
// bucket, else its snapshot's seq, else 0.
func (w writeTx) lastSeq(uid []byte, events *bolt.Bucket) (uint64, error) {
	if events != nil {
		if k, _ := events.Cursor().Last(); k != nil {
			seq, ok := parseSeqKey(k)
			if !ok {
				return 0, fmt.Errorf("%w: last key %x of the pod's stream is not a sequence number", ErrCorrupt, k)
			}
			return seq, nil
		}
	}
	return w.snapshotSeq(uid)
}

// snapshotSeq is the seq of the pod's stored snapshot, 0 if none.
func (w writeTx) snapshotSeq(uid []byte) (uint64, error) {
	v := w.snaps.Get(uid)
	if v == nil {
		return 0, nil
	}
	var s pb.Snapshot
	if err := proto.Unmarshal(v, &s); err != nil {
		return 0, fmt.Errorf("%w: stored snapshot does not decode: %v", ErrCorrupt, err)
	}
	return s.Seq, nil
}
