package journal

import (
	"context"
	"sync"
	"sync/atomic"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// requestKind is what a write request does.
type requestKind int

const (
	kindAppend requestKind = iota
	kindSnapshot
	kindDelete
	kindVerify
)

// Request states: queued → taken by the writer, or queued → canceled by its
// caller. Exactly one of the two transitions happens.
const (
	stateQueued int32 = iota
	stateTaken
	stateCanceled
)

// request is one call waiting for the writer.
type request struct {
	kind  requestKind
	uid   string
	first uint64   // kindAppend: seq of recs[0]
	recs  [][]byte // kindAppend: marshalled envelopes; kindSnapshot: the snapshot
	size  int      // bytes in recs
	snap  *pb.Snapshot
	ctx   context.Context // kindVerify: the caller's

	state atomic.Int32
	done  chan error // buffered; receives the outcome once
}

func newRequest(kind requestKind, uid string) *request {
	return &request{kind: kind, uid: uid, done: make(chan error, 1)}
}

// records is how many envelopes the request writes (for MaxBatch).
func (r *request) records() int {
	if r.kind == kindAppend {
		return len(r.recs)
	}
	return 1
}

// queue holds the requests waiting for the writer. It has no timer: the
// writer takes whatever is there whenever it is free.
type queue struct {
	mu      sync.Mutex
	pending []*request
	closed  bool
	wake    chan struct{} // capacity 1: "pending may be non-empty or closed"
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

// push enqueues r, or fails with ErrClosed.
func (q *queue) push(r *request) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.pending = append(q.pending, r)
	q.mu.Unlock()
	q.signal()
	return nil
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close makes push fail; take still returns what is pending.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// length is the number of requests waiting (including canceled ones the
// writer has not dropped yet).
func (q *queue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// take blocks until requests are pending and returns the oldest ones, up to
// maxRecords envelopes (at least one request) and never more than one verify
// request, which travels alone. It returns false once the queue is closed and
// empty. Returned requests still have to be claimed.
func (q *queue) take(maxRecords int, batch []*request) ([]*request, bool) {
	q.mu.Lock()
	for len(q.pending) == 0 {
		if q.closed {
			q.mu.Unlock()
			return nil, false
		}
		q.mu.Unlock()
		<-q.wake
		q.mu.Lock()
	}
	n, records := 0, 0
	for _, r := range q.pending {
		if r.kind == kindVerify {
			if n == 0 {
				n = 1
			}
			break
		}
		if n > 0 && records+r.records() > maxRecords {
			break
		}
		records += r.records()
		n++
	}
	batch = append(batch[:0], q.pending[:n]...)
	rest := copy(q.pending, q.pending[n:])
	clear(q.pending[rest:])
	q.pending = q.pending[:rest]
	q.mu.Unlock()
	return batch, true
}
