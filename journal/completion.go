package journal

import "context"

// completion tells the callers of one batch that the writer has answered
// every request of it (set its err): it closes done. One closed channel
// wakes the batch's thousands of waiting callers, where a send to each
// caller's own channel took a lock and a copy per caller in the writer.
//
// A caller does not know which batch its request will be in when it queues
// it, so it waits on the queue's next completion, read before its push; the
// writer gives each request it takes the completion of its batch (in
// request.comp) before it makes a new one the queue's next. So the
// completion a caller waits on is that of its own batch or of an earlier
// one, never of a later one:
//
//   - read before the push, it is the next batch's at the time of the push,
//     and a request pushed after a batch was taken is in a later batch;
//   - after a wake-up that was not for its request (comp is another
//     completion or still nil), the caller reads the queue's next before
//     it reads comp: if comp is still nil then, the request is taken into
//     that batch or a later one.
//
// An early wake-up (a request pushed while its batch was being taken, or
// left for the next batch by MaxBatch) costs the caller one more wait.
type completion struct {
	done chan struct{}
}

func newCompletion() *completion { return &completion{done: make(chan struct{})} }

// complete wakes the callers waiting on c; the writer has set the err of
// every request it gave c.
func (c *completion) complete() { close(c.done) }

// nextWait returns the completion to wait on after c completed, and
// whether r has its outcome (c was r's batch's).
func (q *queue) nextWait(r *request, c *completion) (*completion, bool) {
	next := q.next.Load() // before comp: see completion
	switch rc := r.comp.Load(); rc {
	case c:
		return nil, true
	case nil:
		return next, false
	default:
		return rc, false
	}
}

// wait waits for the outcome of the queued request r, whose caller read c
// as the queue's next completion before it pushed r, and returns it.
// Callers wait here for as long as the commit takes, so this frame is small.
func (q *queue) wait(r *request, c *completion) error {
	for done := false; !done; {
		<-c.done
		c, done = q.nextWait(r, c)
	}
	return r.err
}

// waitCtx is wait that gives up when ctx ends while r is still queued
// (canceled: the writer drops it, and wait returns ctx's error). Once the
// writer has claimed r, it waits for the outcome, whatever ctx does.
func (q *queue) waitCtx(ctx context.Context, r *request, c *completion) (err error, canceled bool) {
	for done := false; !done; {
		select {
		case <-c.done:
			c, done = q.nextWait(r, c)
		case <-ctx.Done():
			if r.state.CompareAndSwap(stateQueued, stateCanceled) {
				return ctx.Err(), true
			}
			return q.wait(r, c), false
		}
	}
	return r.err, false
}
