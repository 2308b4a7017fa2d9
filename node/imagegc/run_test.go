package imagegc

import (
	"context"
	"testing"
	"time"
)

// waitListed waits for the next pass to list images.
func waitListed(t *testing.T, f *fakeRuntime) {
	t.Helper()
	select {
	case <-f.listed:
	case <-time.After(10 * time.Second):
		t.Fatal("no garbage collection pass")
	}
}

func TestRunCollectsAtOnceThenEveryPeriod(t *testing.T) {
	h := newHarness(t, DefaultPolicy(), WithPeriod(time.Minute))
	h.rt.addImage("sha256:x", 900) // 90%
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.m.Run(ctx) }()

	waitListed(t, h.rt) // t0: first sight, too young
	for range 2 {       // t0+1m, t0+2m
		h.clock.Step(time.Minute)
		waitListed(t, h.rt)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if h.rt.has("sha256:x") {
		t.Fatalf("image not removed after MinAge; RemoveImage calls %v", h.rt.removeCalls())
	}
	if len(h.removed) != 1 {
		t.Errorf("OnRemove calls = %v", ids(h.removed))
	}
}

func TestRunDefaultPeriod(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	if h.m.period != DefaultPeriod || DefaultPeriod != 5*time.Minute {
		t.Fatalf("period = %v", h.m.period)
	}
}

func TestStatfsCapacity(t *testing.T) {
	ctx := context.Background()
	c, err := StatfsCapacity(ctx, t.TempDir())
	if err != nil || c == 0 {
		t.Fatalf("StatfsCapacity(tempdir) = %d, %v", c, err)
	}
	if _, err := StatfsCapacity(ctx, "/nonexistent/imagegc/mount"); err == nil {
		t.Fatal("StatfsCapacity of a missing path succeeded")
	}
}
