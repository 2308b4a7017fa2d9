package journal

import (
	"context"
	"sync/atomic"
)

// Waking the callers of a committed batch.
//
// Each request has its own channel (request.wake) on which its caller waits
// once it has queued it. When the writer has set the outcomes of a batch, it
// wakes the batch's callers chunk by chunk, in batch order (wakeBatch):
//
//   - the writer wakes only the head (first request) of the first chunk;
//   - a chunk's head, once woken, wakes the other requests of its chunk;
//   - the last caller of a chunk to wake wakes the next chunk's head;
//
// and, for a batch of pipelineMin requests or more, the writer takes its
// next batch only once half of this batch's callers have woken.
//
// Why not wake every caller at once (one closed channel per batch, as
// before): with thousands of callers, all of them become runnable at once,
// most of them in the Go scheduler's global run queue, which is first in,
// first out. The writer, whenever it was preempted (10 ms of running, or a
// garbage collection) or came back from its fsync without a processor,
// landed behind them and waited until nearly all of them had run and queued
// again (runtime traces at 10,000 writers: as long runnable as running,
// dozens of waits of 20-290 ms per 200,000 records), then took them all: the
// writer and the callers took turns instead of overlapping, and batches
// alternated between a few requests and nearly all writers. Chunk by chunk,
// about two chunks of callers are runnable at a time, and the writer gets a
// processor back within a few goroutines' turns.
//
// Why the writer waits for half: woken chunk by chunk, callers queue again
// at the pace the chunks are woken, and a writer that takes whatever is
// queued the moment it is free then commits a chunk or two at a time when
// commits are quick (fsync nearly free, as with NoSync): 19-56 records per
// commit at 10,000 writers, at twice the CPU per record. Half a batch is
// what the next commit can take while the other half is still on its way,
// so that the two overlap. The wait ends without anything more from the
// callers than taking their outcome, which every caller does as soon as it
// runs: a caller that does not append again does not hold the writer.

// wakeChunkSize is how many requests of a batch are woken together. Far
// below the scheduler's local run queue (256 goroutines), so that a chunk's
// callers do not spill into its global queue.
const wakeChunkSize = 64

// pipelineMin is the smallest batch whose writer waits until half of its
// callers have woken before it takes the next.
const pipelineMin = 2 * wakeChunkSize

// wakeChunk is a run of requests of one batch whose callers are woken
// together.
type wakeChunk struct {
	round *wakeRound
	// head is the chunk's first request, members the others.
	head    *request
	members []*request
	// left counts the chunk's requests whose callers have not woken yet.
	left atomic.Int32
	// next is the head of the next chunk of the batch, nil if none.
	next *request
}

// wakeRound counts the callers of one batch that have woken.
type wakeRound struct {
	woken  atomic.Int64
	quorum int64
	// half is closed once quorum callers have woken.
	half chan struct{}
}

// wakeBatch wakes the callers of the batch, whose outcomes the writer has
// set: it wakes the first chunk's head, and the callers wake the rest. It
// returns the channel that is closed once half of them have woken, nil for
// a batch smaller than pipelineMin. Writer only; it must not touch the
// requests afterwards (their callers release them).
func wakeBatch(batch []*request) (half <-chan struct{}) {
	if len(batch) == 0 {
		return nil
	}
	round := &wakeRound{quorum: int64(len(batch)+1) / 2, half: make(chan struct{})}
	// The chunks outlive batch, which the writer reuses.
	all := append([]*request(nil), batch...)
	chunks := make([]wakeChunk, (len(all)+wakeChunkSize-1)/wakeChunkSize)
	for k := range chunks {
		from, to := k*wakeChunkSize, min((k+1)*wakeChunkSize, len(all))
		c := &chunks[k]
		c.round = round
		c.head, c.members = all[from], all[from+1:to]
		c.left.Store(int32(to - from))
		if to < len(all) {
			c.next = all[to]
		}
		for _, r := range all[from:to] {
			r.chunk = c
		}
	}
	all[0].wake <- struct{}{}
	if len(all) < pipelineMin {
		return nil
	}
	return round.half
}

// woken does what r's caller owes the other callers of r's batch once it
// has received from r.wake, before it reads r's outcome: as its chunk's
// head, wake the chunk's members; as the last of the chunk to wake, wake the
// next chunk's head; as the caller that makes half of the batch woken, let
// the writer go on.
func (r *request) woken() {
	c := r.chunk
	if c.head == r {
		for _, m := range c.members {
			m.wake <- struct{}{}
		}
	}
	if c.left.Add(-1) == 0 && c.next != nil {
		c.next.wake <- struct{}{}
	}
	if rd := c.round; rd.woken.Add(1) == rd.quorum {
		close(rd.half)
	}
}

// wait waits for r's outcome; r was queued.
func (r *request) wait() error {
	<-r.wake
	r.woken()
	return r.err
}

// waitCtx is wait that gives up when ctx ends while r is still queued
// (canceled: the writer drops it, and waitCtx returns ctx's error). Once the
// writer has claimed r, it waits for the outcome, whatever ctx does.
func (r *request) waitCtx(ctx context.Context) (err error, canceled bool) {
	select {
	case <-r.wake:
		r.woken()
		return r.err, false
	case <-ctx.Done():
		if r.state.CompareAndSwap(stateQueued, stateCanceled) {
			return ctx.Err(), true
		}
		return r.wait(), false
	}
}
