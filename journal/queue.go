package journal

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// requestKind is what a write request does.
type requestKind uint8

const (
	kindAppend requestKind = iota
	kindSnapshot
	kindDelete
	kindVerify
	// kindClosed marks a closed queue; it is never a caller's request.
	kindClosed
)

// Request states: queued → taken by the writer, or queued → canceled by its
// caller. Exactly one of the two transitions happens.
const (
	stateQueued int32 = iota
	stateTaken
	stateCanceled
)

// request is one call waiting for the writer. Requests are pooled: the
// caller gets one from newRequest and gives it back with release once it has
// the outcome, when neither the writer nor bbolt refers to it any more.
//
// A pooled request is 192 bytes, a size class whose objects start at
// multiples of 64 bytes: the fields take reads for every request fill its
// first cache line, and an append's records (recs, and one, where recs
// points for one record) its second. The writer then reads the records,
// the pod's index entry, and err only for a refused request or a failed
// commit.
type request struct {
	next *request // in the queue's stack
	// wake receives one value when the request has its outcome; its
	// caller waits on it (see wakeBatch). Capacity 1, made with the pooled
	// request.
	wake chan struct{}
	// chunk is the wake-up chunk the writer put the request in (see
	// wakeBatch), set with its outcome.
	chunk *wakeChunk
	state atomic.Int32
	kind  requestKind
	// ifLast: a kindDelete that applies only if the pod's stream still ends
	// at first (DeleteAt).
	ifLast bool
	uid    string
	// first is kindAppend's seq of recs[0], kindSnapshot's snapshot seq,
	// and the pod's last seq for a kindDelete with ifLast.
	first uint64
	// records is how many envelopes the request writes (for MaxBatch): 1
	// but for appends.
	records int

	// encodeBuffers hold recs: kindAppend's marshalled envelopes,
	// kindSnapshot's snapshot.
	encodeBuffers
	// err is the outcome, set by the writer before it wakes the batch:
	// nil from the pool, and set only to an error.
	err error
	ctx context.Context // kindVerify: the caller's
}

var requestPool = sync.Pool{New: func() any {
	r := &request{wake: make(chan struct{}, 1)}
	r.recs = r.one[:0]
	return r
}}

func newRequest(kind requestKind, uid string) *request {
	r := requestPool.Get().(*request)
	r.kind, r.uid, r.records = kind, uid, 1
	return r
}

// release returns a request whose outcome its caller has received to the
// pool, with its buffers: neither the writer nor bbolt refers to them any
// more. (A canceled request is not released: the writer may still look at
// it.)
func (r *request) release() {
	r.uid, r.first, r.ctx, r.next, r.ifLast, r.err, r.chunk = "", 0, nil, nil, false, nil, nil
	r.encodeBuffers.reset()
	r.state.Store(stateQueued)
	requestPool.Put(r)
}

// queue holds the requests waiting for the writer. It has no timer: the
// writer takes whatever is there whenever it is free (see runWriter).
//
// Pushing takes no lock: callers push onto a lock-free stack (one
// compare-and-swap), and the writer takes the whole stack at once and puts it
// back in push order. (A mutex here makes thousands of callers queue up
// behind each other and behind the writer, which then waits its turn for
// every batch.) Closing pushes a marker that makes later pushes fail; the
// requests under it are still taken.
type queue struct {
	// head is the newest pushed request; its next the one pushed before.
	head atomic.Pointer[request]
	// mark, once set by close, is the marker pushed by close, under which
	// the requests pushed before it wait. It is never reused.
	mark atomic.Pointer[request]
	// n counts the requests pushed and not yet taken.
	n    atomic.Int64
	wake chan struct{} // capacity 1: "head may be non-nil"

	// ready are requests moved off the stack, in push order, that take has
	// not returned yet (at most MaxBatch per call). Writer only.
	ready []*request
}

// closedMark is the head of a closed queue whose requests have all been moved
// off the stack (grab replaces the queue's mark with it).
var closedMark = &request{kind: kindClosed}

func newQueue() *queue {
	return &queue{wake: make(chan struct{}, 1)}
}

// push enqueues r, or fails with ErrClosed.
func (q *queue) push(r *request) error {
	for {
		h := q.head.Load()
		// Only compare h: it may be a request that was taken, answered
		// and reused meanwhile (compare-and-swap then fails, or succeeds
		// rightly since h is the head again).
		if q.isClosedMark(h) {
			return ErrClosed
		}
		r.next = h
		if q.head.CompareAndSwap(h, r) {
			break
		}
	}
	q.n.Add(1)
	q.signal()
	return nil
}

// isClosedMark reports whether h marks the queue closed.
func (q *queue) isClosedMark(h *request) bool {
	return h != nil && (h == closedMark || h == q.mark.Load())
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close makes push fail; take still returns what is pending. It is called
// once.
func (q *queue) close() {
	m := &request{kind: kindClosed}
	q.mark.Store(m)
	for {
		h := q.head.Load()
		m.next = h
		if q.head.CompareAndSwap(h, m) {
			break
		}
	}
	q.signal()
}

// length is the number of requests waiting (including canceled ones the
// writer has not dropped yet).
func (q *queue) length() int { return int(max(0, q.n.Load())) }

// grab moves everything pushed so far to ready, in push order, and reports
// whether the queue is closed.
func (q *queue) grab() (closed bool) {
	for {
		h := q.head.Load()
		var list, replacement *request
		switch {
		case h == nil:
			return false
		case h == closedMark:
			return true
		case h == q.mark.Load():
			list, replacement, closed = h.next, closedMark, true
		default:
			list = h
		}
		if !q.head.CompareAndSwap(h, replacement) {
			continue // a push came first
		}
		from := len(q.ready)
		for r := list; r != nil; {
			next := r.next
			r.next = nil
			q.ready = append(q.ready, r)
			r = next
		}
		slices.Reverse(q.ready[from:])
		return closed
	}
}

// take blocks until requests are pending and returns the oldest ones, up to
// maxRecords envelopes (at least one request) and never more than one verify
// request, which travels alone. It claims the requests it returns: those
// whose callers gave up before are dropped. It returns false once the queue
// is closed and empty. Writer only.
func (q *queue) take(maxRecords int, batch []*request) ([]*request, bool) {
	batch = batch[:0]
	for len(batch) == 0 {
		for {
			closed := q.grab()
			if len(q.ready) > 0 {
				break
			}
			if closed {
				return nil, false
			}
			<-q.wake
		}
		used, records := 0, 0
		for _, r := range q.ready {
			if r.kind == kindVerify && len(batch) > 0 {
				break
			}
			n := r.records
			if len(batch) > 0 && records+n > maxRecords {
				break
			}
			used++
			if !r.state.CompareAndSwap(stateQueued, stateTaken) {
				continue // canceled: its caller is gone
			}
			batch = append(batch, r)
			records += n
			if r.kind == kindVerify {
				break
			}
		}
		rest := copy(q.ready, q.ready[used:])
		clear(q.ready[rest:])
		q.ready = q.ready[:rest]
		q.n.Add(-int64(used))
	}
	return batch, true
}
