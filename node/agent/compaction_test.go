package agent

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// A running node's compaction deletes removed pods once their retention has
// passed, keeps the recently removed ones, the live ones and those whose
// clean-up is not journaled yet, and a pod written to after the read is not
// deleted.
func TestCompactRemovedHonoursRetention(t *testing.T) {
	ctx := context.Background()
	j, err := journal.Open(ctx, t.TempDir(), journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(uid string, seq uint64) *pb.Envelope {
		return &pb.Envelope{Seq: seq, PodUid: uid, Event: &pb.Event{Kind: &pb.Event_PodRemoved{PodRemoved: &pb.PodRemoved{}}}}
	}
	removed := func(uid string, at time.Time, cleanedUp bool) {
		if err := j.Append(ctx, uid, ev(uid, 1)); err != nil {
			t.Fatal(err)
		}
		snap := &pb.Snapshot{Seq: 1, PodUid: uid, TimeUnixNano: at.UnixNano(), State: &pb.PodState{Uid: uid, Seq: 1, Removed: true, CleanedUp: cleanedUp}}
		if err := j.SaveSnapshot(ctx, snap); err != nil {
			t.Fatal(err)
		}
	}
	removed("old", now.Add(-2*time.Hour), true)
	removed("recent", now.Add(-30*time.Minute), true)
	removed("not-cleaned-up", now.Add(-2*time.Hour), false)
	if err := j.Append(ctx, "live", ev("live", 1)); err != nil {
		t.Fatal(err)
	}
	n, err := compactRemoved(ctx, j, time.Hour, now)
	if err != nil || n != 1 {
		t.Fatalf("compacted %d (%v), want 1", n, err)
	}
	pods, _ := j.Pods(ctx)
	if !slices.Equal(pods, []string{"live", "not-cleaned-up", "recent"}) {
		t.Fatalf("pods %v after compaction", pods)
	}
	// An hour later the recent one goes too.
	if n, err := compactRemoved(ctx, j, time.Hour, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("compacted %d (%v), want 1", n, err)
	}
	if got := compactionPeriod(time.Hour); got != 10*time.Minute {
		t.Fatalf("period %v", got)
	}
}

func TestFirstCompactionIsWithinAPeriod(t *testing.T) {
	period := 10 * time.Minute
	for _, c := range []struct {
		r    float64
		want time.Duration
	}{{0, 5 * time.Minute}, {0.5, 7*time.Minute + 30*time.Second}, {0.999999, period - 300*time.Microsecond}} {
		if got := firstCompaction(period, c.r); got != c.want {
			t.Errorf("firstCompaction(%v, %v) = %v, want %v", period, c.r, got, c.want)
		}
	}
	// Spread: the nodes of a fleet do not all pick the same second.
	seen := map[time.Duration]bool{}
	for range 100 {
		d := firstCompaction(period, rand.Float64())
		if d < period/2 || d >= period {
			t.Fatalf("first compaction after %v, want in [%v, %v)", d, period/2, period)
		}
		seen[d.Truncate(time.Second)] = true
	}
	if len(seen) < 50 {
		t.Fatalf("100 first compactions fell on %d distinct seconds", len(seen))
	}
}
