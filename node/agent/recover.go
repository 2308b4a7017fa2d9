package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// recoverState reads every pod's journal and lists the runtime once,
// asking the status only of objects whose state the journal does not know.
func recoverState(ctx context.Context, j *journal.Journal, client *cri.Client, epochs *cri.Epochs, retention time.Duration, log *zap.Logger) (*actors.Recovery, map[string]*cri.PodView, error) {
	rec := &actors.Recovery{States: map[string]*lifecycle.State{}, Views: map[string]*pb.RuntimeObserved{}, ListedAt: time.Now()}
	streams, err := j.LoadAll(ctx)
	if err != nil {
		if rec.Damaged, err = dropDamaged(ctx, j, err, log); err != nil {
			return nil, nil, fmt.Errorf("recover from journal %s: %w", j.Path(), err)
		}
	}
	if q := j.Quarantined(); q != nil {
		rec.Lost = "journal quarantined: " + q.Error()
	} else if len(streams) == 0 {
		rec.Lost = "the journal is empty or was missing"
	}
	for uid, s := range streams {
		st, err := actors.Restore(uid, s.Snapshot, s.Events)
		if err != nil {
			return nil, nil, fmt.Errorf("recover from journal %s: %w", j.Path(), err)
		}
		if st.P.Removed && st.Done() && len(s.Events) == 0 && s.Snapshot != nil &&
			time.Since(time.Unix(0, s.Snapshot.TimeUnixNano)) > retention {
			// Compaction of removed pods: their final snapshot has been kept
			// long enough (and their clean-up is journaled: see Done).
			if err := j.Delete(ctx, uid); err != nil {
				return nil, nil, fmt.Errorf("compact removed pod %s: %w", uid, err)
			}
			log.Info("compacted a removed pod out of the journal", zap.String("pod", uid))
			continue
		}
		rec.States[uid] = st
	}
	views, epoch, err := listAtStart(ctx, client, epochs, actors.KnownObjects(rec.States), log)
	if err != nil {
		return nil, nil, fmt.Errorf("list the runtime's pods: %w", err)
	}
	rec.Epoch = epoch
	returned := epochs.Now()
	for uid, v := range views {
		v.Epoch, v.Returned = epoch, returned // the listing's own views, not yet handed out
		rec.Views[uid] = actors.Observed(uid, v)
	}
	return rec, views, nil
}

// dropDamaged handles LoadAll's error: when it is a *journal.CorruptError
// whose problems all name a pod, the damaged pods' streams are deleted (their
// history is lost; the actors rebuild them from the runtime and journal them
// afresh) and returned with what was wrong; each is logged at error level.
// Any other error (a problem of the file as a whole) is returned as is.
func dropDamaged(ctx context.Context, j *journal.Journal, err error, log *zap.Logger) (map[string]string, error) {
	var ce *journal.CorruptError
	if !errors.As(err, &ce) {
		return nil, err
	}
	damaged := map[string]string{}
	for _, p := range ce.Problems {
		if p.PodUID == "" {
			return nil, err
		}
		what := p.Detail
		if p.Seq != 0 {
			what = fmt.Sprintf("record %d: %s", p.Seq, p.Detail)
		}
		if prev, ok := damaged[p.PodUID]; ok {
			what = prev + "; " + what
		}
		damaged[p.PodUID] = what
	}
	for uid, what := range damaged {
		log.Error("JOURNAL DAMAGED: the pod's history failed its check and is dropped; the pod is rebuilt from the runtime",
			zap.String("uid", uid), zap.String("damage", what), zap.String("journal", j.Path()))
		if err := j.Delete(ctx, uid); err != nil {
			return nil, fmt.Errorf("drop the damaged stream of pod %s: %w", uid, err)
		}
	}
	return damaged, nil
}

// listAtStart lists the runtime's pods for recovery. A listing that fails
// for a reason that may pass (the runtime unavailable or restarting, a
// timeout, an internal error) is tried again, 100 ms doubling to 5 s, until
// ctx ends: one lost reply must not stop the node. Other errors end it.
func listAtStart(ctx context.Context, client *cri.Client, epochs *cri.Epochs, known *cri.Known, log *zap.Logger) (map[string]*cri.PodView, uint64, error) {
	var views map[string]*cri.PodView
	var epoch uint64
	var last error
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: math.MaxInt32}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		var err error
		epoch = epochs.Next()
		views, err = client.ListPodsKnown(ctx, known)
		if err == nil {
			return true, nil
		}
		if !cri.Retryable(err) {
			return false, err
		}
		last = err
		log.Warn("cannot list the runtime's pods yet; retrying", zap.Error(err))
		return false, nil
	})
	if err != nil && last != nil && ctx.Err() != nil {
		return nil, 0, fmt.Errorf("%w (last: %w)", err, last)
	}
	return views, epoch, err
}

// loader reloads one pod from the journal (restarted or newly seen actors).
func loader(j *journal.Journal) actors.Loader {
	return func(ctx context.Context, uid string) (*lifecycle.State, error) {
		s, err := j.Load(ctx, uid)
		if errors.Is(err, journal.ErrNotFound) {
			return lifecycle.NewState(uid), nil
		}
		if err != nil {
			return nil, err
		}
		return actors.Restore(uid, s.Snapshot, s.Events)
	}
}
