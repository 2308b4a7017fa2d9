package imagegc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const (
	running = runtimeapi.ContainerState_CONTAINER_RUNNING
	exited  = runtimeapi.ContainerState_CONTAINER_EXITED
)

func TestBelowHighThresholdRemovesNothing(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	h.rt.addImage("sha256:a", 400)
	h.rt.addImage("sha256:b", 440) // 84% of 1000
	h.clock.Step(time.Hour)
	h.collect(t) // first sight
	h.clock.Step(time.Hour)
	res, err := h.collect(t)
	if err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if got := h.rt.removeCalls(); len(got) != 0 || len(res.Removed) != 0 || res.BytesFreed != 0 {
		t.Fatalf("removed %v (result %v, %d bytes) below the threshold", got, ids(res.Removed), res.BytesFreed)
	}
	if res.UsagePercent != 84 || res.UsedBytes != 840 || res.CapacityBytes != 1000 || res.BytesToFree != 0 {
		t.Errorf("result = %+v", res)
	}
	if ev := h.events.reasons(); len(ev) != 0 {
		t.Errorf("events = %v", ev)
	}
}

func TestAboveHighFreesToLowLeastRecentlyUsedFirst(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	// IDs sort opposite to their last use, so ID order would pick new first.
	h.rt.addImage("sha256:ccc-old", 100)
	h.rt.addImage("sha256:bbb-mid", 100)
	h.rt.addImage("sha256:aaa-new", 100)
	h.rt.addImage("sha256:inuse", 650)
	h.rt.run("c-old", "sha256:ccc-old", exited)
	h.rt.run("c-mid", "sha256:bbb-mid", exited)
	h.rt.run("c-new", "sha256:aaa-new", exited)
	h.rt.run("c-inuse", "sha256:inuse", running)
	h.disk.set(10000) // no pressure while usage history builds up

	for _, c := range []string{"c-old", "c-mid", "c-new"} {
		if _, err := h.collect(t); err != nil {
			t.Fatal(err)
		}
		h.rt.removeContainer(c)
		h.clock.Step(time.Minute)
	}
	h.clock.Step(10 * time.Minute)
	h.disk.set(1000) // 950 used: 95%, free 150 to reach 80%

	res, err := h.collect(t)
	if err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	want := []string{"sha256:ccc-old", "sha256:bbb-mid"}
	if got := ids(res.Removed); !slices.Equal(got, want) {
		t.Fatalf("removed %v, want %v", got, want)
	}
	if !slices.Equal(h.rt.removeCalls(), want) || !slices.Equal(ids(h.removed), want) {
		t.Errorf("RemoveImage calls %v, callbacks %v, want %v", h.rt.removeCalls(), ids(h.removed), want)
	}
	if res.BytesFreed != 200 || res.BytesToFree != 150 || res.UsagePercent != 95 {
		t.Errorf("result = %+v", res)
	}
	if !h.rt.has("sha256:aaa-new") || !h.rt.has("sha256:inuse") {
		t.Error("removed more than needed")
	}
	if r := res.Removed[0]; r.Reason != ReasonSpace || !r.LastUsed.Equal(t0) || !r.FirstSeen.Equal(t0) {
		t.Errorf("removal = %+v", r)
	}
	if ev := h.events.reasons(); len(ev) != 0 {
		t.Errorf("events = %v", ev)
	}
}

func TestInUsePinnedAndSandboxImagesKept(t *testing.T) {
	h := newHarness(t, DefaultPolicy(), WithSandboxImages("registry.k8s.io/pause:3.10"))
	h.rt.addImage("sha256:exited", 220)
	h.rt.addImage("sha256:bytag", 220, "docker.io/library/nginx:1.27")
	h.rt.addImage("sha256:pause", 220, "registry.k8s.io/pause:3.10")
	h.rt.addImage("sha256:pinned", 220).Pinned = true
	h.rt.addImage("sha256:free", 50)
	h.rt.run("c1", "sha256:exited", exited)                 // not running still counts
	h.rt.run("c2", "docker.io/library/nginx:1.27", running) // referred to by tag
	h.disk.set(10000)
	h.collect(t)
	h.clock.Step(time.Hour)
	h.disk.set(1000) // 930 used: free 130, only 50 removable

	res, err := h.collect(t)
	if got := ids(res.Removed); !slices.Equal(got, []string{"sha256:free"}) {
		t.Fatalf("removed %v, want only sha256:free", got)
	}
	if !errors.Is(err, ErrFreeDiskSpace) || !strings.Contains(err.Error(), "attempted to free 130 bytes, but only freed 50") {
		t.Fatalf("err = %v, want ErrFreeDiskSpace for 130 bytes", err)
	}
	if ev := h.events.reasons(); !slices.Equal(ev, []string{"Warning/FreeDiskSpaceFailed"}) {
		t.Errorf("events = %v", ev)
	}
}

func TestMinAgeRespected(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	h.rt.addImage("sha256:young", 900)
	res, err := h.collect(t) // first seen at t0, 90%
	if len(res.Removed) != 0 || !errors.Is(err, ErrFreeDiskSpace) {
		t.Fatalf("at first sight: removed %v, err %v", ids(res.Removed), err)
	}
	h.clock.Step(DefaultMinAge - time.Second)
	if res, _ := h.collect(t); len(res.Removed) != 0 {
		t.Fatalf("removed %v before MinAge", ids(res.Removed))
	}
	h.clock.Step(time.Second)
	res, err = h.collect(t)
	if err != nil || !slices.Equal(ids(res.Removed), []string{"sha256:young"}) {
		t.Fatalf("at MinAge: removed %v, err %v", ids(res.Removed), err)
	}
}

func TestMaxAgeRemovesIdleImages(t *testing.T) {
	p := DefaultPolicy()
	p.MaxAge = time.Hour
	h := newHarness(t, p)
	h.disk.set(1 << 30) // never any pressure
	h.rt.addImage("sha256:never-used", 10)
	h.rt.addImage("sha256:used", 10)
	h.rt.addImage("sha256:running", 10)
	h.rt.run("c1", "sha256:used", exited)
	h.rt.run("c2", "sha256:running", running)
	h.collect(t)
	h.clock.Step(10 * time.Minute)
	h.collect(t) // sha256:used last used at t0+10m
	h.rt.removeContainer("c1")

	h.clock.Step(50 * time.Minute) // t0+1h: never-used idle exactly MaxAge
	if res, err := h.collect(t); err != nil || len(res.Removed) != 0 {
		t.Fatalf("at MaxAge: removed %v, err %v", ids(res.Removed), err)
	}
	h.clock.Step(time.Second)
	res, err := h.collect(t)
	if err != nil || !slices.Equal(ids(res.Removed), []string{"sha256:never-used"}) {
		t.Fatalf("after MaxAge: removed %v, err %v", ids(res.Removed), err)
	}
	if res.Removed[0].Reason != ReasonAge || !res.Removed[0].LastUsed.IsZero() {
		t.Errorf("removal = %+v", res.Removed[0])
	}
	h.clock.Step(10 * time.Minute)
	res, err = h.collect(t)
	if err != nil || !slices.Equal(ids(res.Removed), []string{"sha256:used"}) {
		t.Fatalf("MaxAge after last use: removed %v, err %v", ids(res.Removed), err)
	}
	if !h.rt.has("sha256:running") {
		t.Error("image in use removed for age")
	}
}

func TestFailedRemovalReportedAndPassContinues(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	boom := errors.New("image is locked")
	h.rt.addImage("sha256:a-stuck", 300)
	h.rt.addImage("sha256:b", 300)
	h.rt.addImage("sha256:c", 300)
	h.rt.removeErr["sha256:a-stuck"] = boom
	h.disk.set(10000)
	h.collect(t)
	h.clock.Step(time.Hour)
	h.disk.set(1000)

	res, err := h.collect(t) // 90%: free 100
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "sha256:a-stuck") {
		t.Fatalf("err = %v, want it to wrap the removal error and name the image", err)
	}
	if errors.Is(err, ErrFreeDiskSpace) {
		t.Errorf("err = %v: the next image freed enough", err)
	}
	if got := h.rt.removeCalls(); !slices.Equal(got, []string{"sha256:a-stuck", "sha256:b"}) {
		t.Fatalf("RemoveImage calls %v", got)
	}
	if !slices.Equal(ids(res.Removed), []string{"sha256:b"}) || res.BytesFreed != 300 {
		t.Errorf("result = %+v", res)
	}
	if ev := h.events.reasons(); !slices.Equal(ev, []string{"Warning/ImageGCFailed"}) {
		t.Errorf("events = %v", ev)
	}
}

func TestImageFsInfoFailure(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	h.rt.fsInfoErr = errors.New("unavailable")
	_, err := h.collect(t)
	if !errors.Is(err, h.rt.fsInfoErr) {
		t.Fatalf("err = %v", err)
	}
	if ev := h.events.reasons(); !slices.Equal(ev, []string{"Warning/ImageGCFailed"}) {
		t.Errorf("events = %v", ev)
	}
}

func TestCanceledPassEmitsNoEvent(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	h.rt.fsInfoErr = context.Canceled
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.m.GarbageCollect(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if ev := h.events.reasons(); len(ev) != 0 {
		t.Errorf("events = %v", ev)
	}
}

func TestRemovedImageIsForgotten(t *testing.T) {
	h := newHarness(t, DefaultPolicy())
	h.rt.addImage("sha256:x", 900)
	h.collect(t)
	h.clock.Step(time.Hour)
	if res, _ := h.collect(t); len(res.Removed) != 1 {
		t.Fatalf("removed %v", ids(res.Removed))
	}
	// Pulled again: it is new, so MinAge protects it once more.
	h.rt.addImage("sha256:x", 900)
	if res, _ := h.collect(t); len(res.Removed) != 0 {
		t.Fatalf("re-pulled image removed at once: %v", ids(res.Removed))
	}
}
