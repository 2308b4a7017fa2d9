package agent

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/journal"
)

// compactionPeriod is how often a running node looks for removed pods whose
// retention has passed: a quarter of the retention, between 10 s and 10 min,
// so a removed pod leaves the journal at most 1.25 × retention after its
// removal (10 min late at most).
func compactionPeriod(retention time.Duration) time.Duration {
	return min(max(retention/4, 10*time.Second), 10*time.Minute)
}

// compactRemovedLoop runs compactRemoved every compactionPeriod until ctx
// ends: removed pods are compacted while the node runs, not only at start.
// The first run is between half a period and a period after start
// (firstCompaction): recovery has just compacted (recoverState), a second
// read of every stream while the pods' actors start would only compete with
// them, and the nodes of a fleet, started together, would otherwise read
// all their streams within the same seconds of every period.
func compactRemovedLoop(ctx context.Context, j *journal.Journal, retention time.Duration, log *zap.Logger) {
	period := compactionPeriod(retention)
	first := time.NewTimer(firstCompaction(period, rand.Float64()))
	select {
	case <-ctx.Done():
		first.Stop()
		return
	case <-first.C:
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		n, err := compactRemoved(ctx, j, retention, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("compaction of removed pods failed; trying again later", zap.Int("compacted", n), zap.Error(err))
		case n > 0:
			log.Info("compacted removed pods out of the journal", zap.Int("pods", n))
		}
	}, period)
}

// firstCompaction is how long after start the first compaction runs, for
// r in [0, 1): from half a period (r = 0) up to a period. Never more than a
// period, so the bound of compactionPeriod holds from the first run on.
func firstCompaction(period time.Duration, r float64) time.Duration {
	return period/2 + time.Duration(r*float64(period-period/2))
}

// compactRemoved deletes from the journal every pod that was removed and
// cleaned up (its stream is a final snapshot of a done pod, PodCleanedUp
// folded in, and no events after it; one whose clean-up is still pending is
// kept, so that its next start carries it out) more
// than retention before now: the retention window keeps a removed pod's
// timeline for `actorlet journal`. Damaged pods (LoadAll's *CorruptError)
// are left for recovery. The delete applies only if the pod's stream still
// ends at that snapshot (journal.DeleteAt), so a pod that came back in the
// meantime is kept.
func compactRemoved(ctx context.Context, j *journal.Journal, retention time.Duration, now time.Time) (int, error) {
	streams, err := j.LoadAll(ctx)
	if streams == nil {
		return 0, err
	}
	n := 0
	for uid, s := range streams {
		if len(s.Events) != 0 || s.Snapshot == nil || now.Sub(time.Unix(0, s.Snapshot.TimeUnixNano)) <= retention {
			continue
		}
		st, rerr := actors.Restore(uid, s.Snapshot, nil)
		if rerr != nil || !st.P.Removed || !st.Done() {
			continue // not removed, or its clean-up not journaled yet
		}
		switch derr := j.DeleteAt(ctx, uid, s.Snapshot.Seq); {
		case derr == nil:
			n++
		case errors.Is(derr, journal.ErrSequence):
			// Written to since it was read: not gone.
		default:
			return n, derr
		}
	}
	return n, nil
}
