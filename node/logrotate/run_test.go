package logrotate

import (
	"context"
	"slices"
	"testing"
	"time"
)

// deadline bounds every wait in these tests; nothing sleeps.
const deadline = 10 * time.Second

func TestRunRotatesEveryInterval(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "small")
	h.rt.add("c1", log, running, true)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.m.Run(ctx)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Error("Run did not return after cancel")
		}
	}()

	waitListed := func() {
		t.Helper()
		select {
		case <-h.rt.listed:
		case <-time.After(deadline):
			t.Fatal("no pass within the deadline")
		}
	}
	waitListed() // the first pass, at once; Run's ticker exists from here on
	// The first pass may still be working on c1; wait for it to finish (it holds mu).
	h.m.mu.Lock()
	h.m.mu.Unlock() //nolint:staticcheck // empty critical section: waits for the pass
	if got := h.rt.reopenCalls(); len(got) != 0 {
		t.Fatalf("first pass reopened %q; the log was small", got)
	}

	writeFile(t, log, "0123456789abc")
	h.clock.Step(9 * time.Second)
	select {
	case <-h.rt.listed:
		t.Fatal("a pass ran before the interval passed")
	default:
	}
	h.clock.Step(time.Second)
	waitListed()
	h.m.mu.Lock()
	h.m.mu.Unlock() //nolint:staticcheck // empty critical section: waits for the pass
	if got := h.rt.reopenCalls(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("ReopenContainerLog calls = %q, want [c1]", got)
	}
	assertNames(t, dir, "0.log", "0.log.20240301-120010")
}
