package agent

import (
	"context"
	"errors"
	"math"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/actorlet/actorlet/journal"
)

// EventHandler is user code that gets every event the node journals, in
// journal order (and so in seq order per pod), from a cursor it keeps
// itself: WithEventHandler.
//
// Guarantee: at least once. The node hands out every record of its journal
// from the position Cursor returns, then each record as it is committed
// (journal.Follow): a record is handed out only once it is durable, and
// never before one that was committed before it. A handler that keeps, durably,
// the Position after the last record it handled resumes there when it or
// the node restarts (a kill -9 included): nothing in between is missed
// (unless compacted: see journal.Records); a record it handled but whose
// cursor it had not yet saved comes again, and its Position (or PodUID and
// Seq) tells it is a duplicate.
//
// Handle runs on its own goroutine, one per handler, and may block: the node
// does not wait for it (a slow handler falls behind and reads the journal
// file as it catches up). It should return soon after its ctx ends: Agent.Stop
// waits for it.
type EventHandler interface {
	// Cursor returns the Position of the first record to hand out (the
	// saved Position+1; 0 or 1 for the whole journal). It is called when
	// the node starts the handler and after each failure.
	Cursor(ctx context.Context) (uint64, error)
	// Handle handles one record. An error stops the stream; the node logs
	// it and, after a back-off (100ms doubling to 30s), starts again from
	// Cursor.
	Handle(ctx context.Context, rec journal.Record) error
}

// runEventHandler feeds h from the journal until ctx ends or the journal is
// closed.
func runEventHandler(ctx context.Context, j *journal.Journal, h EventHandler, log *zap.Logger) {
	newBackoff := func() wait.Backoff {
		return wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Cap: 30 * time.Second, Steps: math.MaxInt32}
	}
	backoff := newBackoff()
	for {
		handled := false
		from, err := h.Cursor(ctx)
		if err == nil {
			err = j.Follow(ctx, from, func(rec journal.Record) error {
				handled = true
				return h.Handle(ctx, rec)
			})
		}
		if ctx.Err() != nil || errors.Is(err, journal.ErrClosed) {
			return
		}
		if handled {
			backoff = newBackoff()
		}
		delay := backoff.Step()
		log.Warn("event handler failed; starting it again from its cursor", zap.Error(err), zap.Duration("after", delay))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
