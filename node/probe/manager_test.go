package probe

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// blockingProber passes startup probes at once; liveness and readiness
// probes wait until their context ends. It logs both.
type blockingProber struct {
	mu  sync.Mutex
	log []string
}

func (b *blockingProber) Probe(ctx context.Context, t Target, h corev1.ProbeHandler, _ time.Duration) (Result, string) {
	kind := h.Exec.Command[0]
	b.add(fmt.Sprintf("%s %s %s@%s", kind, t.Container.Name, t.ContainerID, t.PodIP))
	if kind == "startup" {
		return Success, ""
	}
	<-ctx.Done()
	b.add(fmt.Sprintf("stopped %s %s", kind, t.ContainerID))
	return Unknown, ""
}

func (b *blockingProber) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = append(b.log, s)
}

func (b *blockingProber) has(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.log, s)
}

func (b *blockingProber) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.log)
}

func probed(kind string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: execHandler(kind), PeriodSeconds: 100}
}

func TestManagerSync(t *testing.T) {
	app := &corev1.Container{Name: "app", StartupProbe: probed("startup"), LivenessProbe: probed("liveness"), ReadinessProbe: probed("readiness")}
	side := &corev1.Container{Name: "side", ReadinessProbe: probed("readiness")}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{*app, *side}}}
	bp := &blockingProber{}
	reports := make(chan Report, 10)
	m := NewManager(pod, bp, clocktesting.NewFakeClock(time.Unix(1000, 0)), func(r Report) { reports <- r })
	ctx := context.Background()
	const ip = "10.1.0.5"
	wait := func(s string) { t.Helper(); waitFor(t, s, func() bool { return bp.has(s) }) }

	// Startup first; a container without one starts with the others.
	m.Sync(ctx, ip, []Running{{Name: "app", ID: "a1", Container: app}, {Name: "side", ID: "s1", Container: side}})
	wait("startup app a1@" + ip)
	wait("readiness side s1@" + ip)
	select {
	case r := <-reports:
		if r.Kind != Startup || r.Result != Success || r.ContainerID != "a1" || r.Container != "app" {
			t.Fatalf("report %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no startup report")
	}
	if bp.has("liveness app a1@" + ip) {
		t.Fatal("liveness probed before the startup probe passed")
	}
	// A repeated Sync restarts nothing (the startup worker ended).
	n := bp.count()
	m.Sync(ctx, ip, []Running{{Name: "app", ID: "a1", Container: app}, {Name: "side", ID: "s1", Container: side}})
	m.Sync(ctx, ip, []Running{{Name: "app", ID: "a1", Container: app, StartupDone: true}, {Name: "side", ID: "s1", Container: side}})
	wait("liveness app a1@" + ip)
	wait("readiness app a1@" + ip)
	if got := bp.count(); got != n+2 {
		t.Fatalf("%d probes after StartupDone, want 2: %q", got-n, bp.log)
	}

	// A new container ID replaces the workers; an unlisted container's stop.
	m.Sync(ctx, ip, []Running{{Name: "app", ID: "a2", Container: app}})
	wait("stopped liveness a1")
	wait("stopped readiness a1")
	wait("stopped readiness s1")
	wait("startup app a2@" + ip)

	m.Sync(ctx, ip, []Running{{Name: "app", ID: "a2", Container: app, StartupDone: true}})
	wait("readiness app a2@" + ip)
	m.Stop()
	if !bp.has("stopped readiness a2") || !bp.has("stopped liveness a2") {
		t.Fatalf("Stop returned before its workers ended: %q", bp.log)
	}
	n = bp.count()
	m.Sync(ctx, ip, []Running{{Name: "side", ID: "s2", Container: side}})
	m.Stop()
	if bp.count() != n {
		t.Fatalf("Sync after Stop started workers: %q", bp.log)
	}
}
