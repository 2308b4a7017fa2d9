package main

import (
	"context"
	"slices"
	"sync"
	"testing"

	"golang.org/x/time/rate"
)

// -direct-rate bounds creations and deletions; -delete-rate, when set,
// bounds the deletions on its own (0: unbounded); neither bounds anything
// without -placement direct. The table's note says which pace each had.
func TestDirectLimiters(t *testing.T) {
	limit := func(l *rate.Limiter) float64 {
		if l == nil {
			return -1
		}
		return float64(l.Limit())
	}
	for _, c := range []struct {
		name           string
		cfg            config
		create, delete float64 // -1: no limiter
		note           string
	}{
		{"unbounded", config{placement: placementDirect, deleteRate: -1}, -1, -1, ""},
		{"direct rate for both", config{placement: placementDirect, directRate: 40, deleteRate: -1}, 40, 40,
			"\npods created and deleted at 40 a second at most\n"},
		{"own delete rate", config{placement: placementDirect, directRate: 30, deleteRate: 200}, 30, 200,
			"\npods created at 30 a second at most, deleted at 200 a second at most\n"},
		{"deletions unbounded", config{placement: placementDirect, directRate: 30, deleteRate: 0}, 30, -1,
			"\npods created at 30 a second at most, deleted as fast as the API server took them\n"},
		{"deletions only", config{placement: placementDirect, deleteRate: 100}, -1, 100,
			"\npods created as fast as the API server took them, deleted at 100 a second at most\n"},
		{"scheduler placement", config{placement: placementScheduler, directRate: 40, deleteRate: 100}, -1, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := limit(c.cfg.directLimiter(false)); got != c.create {
				t.Errorf("creations limited to %v, want %v", got, c.create)
			}
			if got := limit(c.cfg.directLimiter(true)); got != c.delete {
				t.Errorf("deletions limited to %v, want %v", got, c.delete)
			}
			if got := c.cfg.directPace(); got != c.note {
				t.Errorf("note %q, want %q", got, c.note)
			}
		})
	}
}

// eachName calls do once for every name, whatever the workers, and stops
// handing out names once ctx ends.
func TestEachName(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, workers := range []int{1, 3, 50} {
		var mu sync.Mutex
		var got []string
		eachName(context.Background(), names, workers, rate.NewLimiter(rate.Inf, 1), func(n string) {
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
		})
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("%d workers: called with %v, want %v once each", workers, got, names)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls int
	eachName(ctx, names, 1, rate.NewLimiter(rate.Every(1<<62), 1), func(string) {
		calls++
		cancel() // the limiter's next token is far off: only ctx's end lets eachName return
	})
	if calls != 1 {
		t.Errorf("after ctx ended: %d calls, want 1", calls)
	}
}
