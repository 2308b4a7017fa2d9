package journal

import (
	"context"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Record is one record of the journal's log, as Records and Follow hand it
// out.
type Record struct {
	// Position is the record's number in the log: it grows in commit order
	// over all pods and is never used twice in a journal file, also across
	// restarts (the log bucket's sequence keeps the largest number ever
	// used). It is the cursor of Records and Follow: a reader that has
	// handled the record at Position resumes from Position+1.
	Position uint64
	// PodUID and Seq name the event: its pod, and its place in the pod's
	// stream (1, 2, 3, ...). Within a pod, Seq grows with Position.
	PodUID string
	Seq    uint64
	// Envelope is the event; nil if the record is damaged.
	Envelope *pb.Envelope
	// Damage, if not empty, says why the record cannot be read (its
	// checksum fails, it does not decode). PodUID and Seq are those its
	// header tells; both are empty if even those cannot be told.
	Damage string
}

// followBatch is how many records Records and Follow read in one read
// transaction; the handler runs outside of it.
const followBatch = 256

// Records calls fn with every record of the log whose Position is at least
// from, in log order, and returns nil once it has handed out the last one
// committed, or fn's error (wrapped), or ctx's.
//
// Guarantees: the records of one pod come in seq order; every record
// committed before Records was called and still in the log when it is read
// is handed out once. Records removed before they were read are not: a
// snapshot compacts the events it covers (a pod's end, and every
// SnapshotEvery events of the PodActor), and a removed pod is deleted after
// its retention. A reader that keeps up with the node reads each record
// before its compaction; one that was away longer may find the pod's next
// Seq after a gap, which its per-pod Seq shows.
func (j *Journal) Records(ctx context.Context, from uint64, fn func(Record) error) error {
	_, err := j.readFrom(ctx, from, fn)
	return err
}

// Follow is Records, then every record as it is committed, until ctx ends
// (it then returns ctx's error), fn fails (its error, wrapped), or the
// journal is closed (ErrClosed). It never misses a record committed while it
// runs, however fast the writer goes: it reads what is committed after its
// cursor, and waits for a commit only when there was nothing. A read-only
// journal has no writer: Follow on it ends like Records.
//
// At-least-once across restarts: a handler keeps the Position of the last
// record it handled, durably; restarted (with the node or alone) it follows
// again from that Position+1, or from that Position itself when it cannot
// tell whether its handling completed, and drops a record whose Position it
// has already handled.
func (j *Journal) Follow(ctx context.Context, from uint64, fn func(Record) error) error {
	for {
		// Take the signal before reading: a commit after the read closes it.
		wake := j.commits.wait()
		next, err := j.readFrom(ctx, from, fn)
		if err != nil {
			return err
		}
		if wake == nil {
			return nil // read-only: nothing more will come
		}
		if next == from {
			select {
			case <-ctx.Done():
				return fmt.Errorf("follow journal %s: %w", j.path, ctx.Err())
			case <-wake:
				if j.closed.Load() {
					// Records committed while Close drained the queue are
					// read by the next Follow, from the handler's cursor.
					return fmt.Errorf("follow journal %s: %w", j.path, ErrClosed)
				}
			}
		}
		from = next
	}
}

// readFrom hands out the records from position from to the last committed
// one, a batch per read transaction, and returns the position after the last
// record it handed out (from if none).
func (j *Journal) readFrom(ctx context.Context, from uint64, fn func(Record) error) (uint64, error) {
	from = max(from, 1)
	batch := make([]Record, 0, followBatch)
	for {
		if err := ctx.Err(); err != nil {
			return from, fmt.Errorf("read journal %s: %w", j.path, err)
		}
		batch = batch[:0]
		err := j.view(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketLog).Cursor()
			for k, v := c.Seek(logKey(from)); k != nil && len(batch) < followBatch; k, v = c.Next() {
				batch = append(batch, followRecord(k, v))
			}
			return nil
		})
		if err != nil {
			return from, fmt.Errorf("read journal %s: %w", j.path, err)
		}
		if len(batch) == 0 {
			return from, nil
		}
		for _, r := range batch {
			if err := fn(r); err != nil {
				return from, fmt.Errorf("handle journal record #%d (pod %q seq %d): %w", r.Position, r.PodUID, r.Seq, err)
			}
			from = r.Position + 1
		}
	}
}

// followRecord reads the log record k → v.
func followRecord(k, v []byte) Record {
	r := readLogRecord(k, v)
	out := Record{Position: r.key, PodUID: string(r.uid), Seq: r.seq}
	switch {
	case r.fileProblem != nil:
		out.Damage = r.fileProblem.Detail
	case r.damage != "":
		out.Damage = r.damage
	default:
		e, p := decodeEnvelope(out.PodUID, r.seq, r.payload)
		if p != nil {
			out.Damage = p.Detail
		} else {
			out.Envelope = e
		}
	}
	return out
}

// commitSignal wakes followers after each commit: wait returns a channel
// that the next commit (or Close) closes. Its zero value is for a read-only
// journal, which never commits: wait returns nil.
type commitSignal struct {
	mu     sync.Mutex
	ch     chan struct{}
	closed bool
}

func newCommitSignal() *commitSignal { return &commitSignal{ch: make(chan struct{})} }

func (s *commitSignal) wait() <-chan struct{} {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

// committed wakes every waiter.
func (s *commitSignal) committed() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	close(s.ch)
	s.ch = make(chan struct{})
}

// close wakes every waiter for the last time.
func (s *commitSignal) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}
