package journal

import (
	"context"
	"fmt"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Append writes events to the pod's stream and returns once they are durable
// (committed and, unless NoSync, fsynced), or with an error.
//
// The caller — the pod's only writer — numbers the events: their seqs must be
// consecutive and the first must be one more than the pod's last stored seq
// (its snapshot's seq if all events were compacted, 0 for a new pod), else
// Append fails with ErrSequence and writes nothing; other pods committed in
// the same transaction are not affected. Each envelope must have pod_uid ==
// podUID, an event and a seq (else ErrInvalid) and a schema_version of 0 or
// SchemaVersion (else ErrSchemaVersion). Append sets a schema_version of 0 to
// SchemaVersion and a time_unix_nano of 0 to the clock's time, in the
// caller's envelopes; the caller must not change them while Append runs.
// Appending no events does nothing.
//
// All or nothing: when Append returns nil all events are stored; when it
// returns an error none is visible to this process. (After an I/O error
// during the commit the file may still hold the batch on the next Open;
// a caller that fails on an error must recover by Load.)
//
// Context: if ctx ends while the request waits in the queue, Append returns
// ctx's error and the events are never written. Once the writer has taken
// the request, Append waits for that commit (one transaction) and returns its
// outcome, whatever ctx does. So an error wrapping ctx.Err() always means
// "not written".
//
// The journal does not know what a secret is: callers must strip Secret data
// from what they journal (see the package documentation).
func (j *Journal) Append(ctx context.Context, podUID string, events ...*pb.Envelope) error {
	if err := checkPodUID(podUID); err != nil {
		return fmt.Errorf("append to pod %q: %w", podUID, err)
	}
	if len(events) == 0 {
		return nil
	}
	r := newRequest(kindAppend, podUID)
	first, err := prepareEnvelopes(podUID, events, j.opts.Clock, &r.encodeBuffers)
	if err != nil {
		r.release()
		return fmt.Errorf("append to pod %q: %w", podUID, err)
	}
	r.first, r.records = first, len(r.recs)
	if err := j.enqueue(ctx, r); err != nil {
		r.release()
		return fmt.Errorf("append to pod %q: %w", podUID, err)
	}
	// Wait here rather than in a helper: thousands of callers park in
	// this frame, and the garbage collector walks every parked stack.
	if ctx.Done() == nil {
		<-r.wake
		r.woken()
		err = r.err
		r.release()
	} else {
		err = j.await(ctx, r)
	}
	if err != nil {
		return fmt.Errorf("append to pod %q: %w", podUID, err)
	}
	return nil
}

// SaveSnapshot durably stores snap as its pod's snapshot (replacing the
// previous one) and deletes the pod's events with seq <= snap.Seq, in one
// transaction. snap.Seq must be at most the pod's last stored seq and at
// least its current snapshot's seq, else ErrSequence. The pod is
// snap.PodUid; the state must be set (ErrInvalid). Durability, atomicity and
// ctx behave as for Append; SaveSnapshot sets a zero schema_version and
// time_unix_nano in snap.
func (j *Journal) SaveSnapshot(ctx context.Context, snap *pb.Snapshot) error {
	uid := snap.GetPodUid()
	if err := checkPodUID(uid); err != nil {
		return fmt.Errorf("save snapshot of pod %q: %w", uid, err)
	}
	rec, err := prepareSnapshot(snap, j.opts.Clock.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("save snapshot of pod %q: %w", uid, err)
	}
	r := newRequest(kindSnapshot, uid)
	r.first, r.recs = snap.Seq, append(r.recs, rec)
	if err := j.submit(ctx, r); err != nil {
		return fmt.Errorf("save snapshot of pod %q: %w", uid, err)
	}
	return nil
}

// Delete durably removes the pod's events and snapshot: the compaction of a
// pod that is gone for good. Deleting a pod with nothing stored succeeds.
// A later Append for the same UID starts a new stream at seq 1. The file does
// not shrink; bbolt reuses the freed pages. Durability and ctx behave as for
// Append.
func (j *Journal) Delete(ctx context.Context, podUID string) error {
	if err := checkPodUID(podUID); err != nil {
		return fmt.Errorf("delete pod %q: %w", podUID, err)
	}
	if err := j.submit(ctx, newRequest(kindDelete, podUID)); err != nil {
		return fmt.Errorf("delete pod %q: %w", podUID, err)
	}
	return nil
}

// DeleteAt deletes the pod as Delete does, but only if its stored stream
// still ends at seq lastSeq (its snapshot's seq if it has no events after
// it): else (also if nothing is stored for it) it fails with ErrSequence
// and deletes nothing. It is how a compaction that decided from a read that a pod is gone
// removes it without racing a writer that appended since.
func (j *Journal) DeleteAt(ctx context.Context, podUID string, lastSeq uint64) error {
	if err := checkPodUID(podUID); err != nil {
		return fmt.Errorf("delete pod %q: %w", podUID, err)
	}
	r := newRequest(kindDelete, podUID)
	r.first, r.ifLast = lastSeq, true
	if err := j.submit(ctx, r); err != nil {
		return fmt.Errorf("delete pod %q: %w", podUID, err)
	}
	return nil
}

// submit queues r for the writer and waits for its outcome (see Append for
// the ctx contract).
func (j *Journal) submit(ctx context.Context, r *request) error {
	if err := j.enqueue(ctx, r); err != nil {
		r.release()
		return err
	}
	return j.await(ctx, r)
}

// enqueue queues r for the writer; its caller then waits on r.wake.
func (j *Journal) enqueue(ctx context.Context, r *request) error {
	if j.readOnly {
		return ErrReadOnly
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return j.queue.push(r)
}

// await waits for the outcome of the queued request r, or for the end of
// ctx while r is still queued, and releases r unless it was canceled.
func (j *Journal) await(ctx context.Context, r *request) error {
	err, canceled := r.waitCtx(ctx)
	if !canceled {
		r.release()
	}
	return err
}
