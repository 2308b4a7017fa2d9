package journal

import (
	"sync"
	"testing"
	"time"
)

// steppingClock is a passive clock that moves on by step each time it is read.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *steppingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// TestStatsCommitTime checks that the time spent in write transactions is
// counted on the journal's clock, once per commit.
func TestStatsCommitTime(t *testing.T) {
	opts := testOptions(t)
	opts.Clock = &steppingClock{now: testTime, step: time.Millisecond}
	j := openT(t, t.TempDir(), opts)
	if st := j.Stats(); st.CommitTime != 0 {
		t.Fatalf("CommitTime %v before any commit", st.CommitTime)
	}
	appendT(t, j, "pod-a", evs("pod-a", 1, 2)...)
	appendT(t, j, "pod-b", evs("pod-b", 1, 1)...)
	st := j.Stats()
	// Each commit reads the clock before and after its transaction: at
	// least one step each (records stamped from the clock add more).
	if st.Commits != 2 || st.CommitTime < 2*time.Millisecond {
		t.Fatalf("stats %+v: want 2 commits taking at least 2ms on the stepping clock", st)
	}
}
