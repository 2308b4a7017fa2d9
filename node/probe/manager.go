package probe

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Running is a running container whose probes should run.
type Running struct {
	Name      string
	ID        string // CRI container ID
	Container *corev1.Container
	// StartupDone: the startup probe succeeded (or there is none). Until
	// then only the startup probe runs; after, liveness and readiness.
	StartupDone bool
	// StartedAt is when the container started (initialDelaySeconds counts
	// from it). Zero: when its worker starts.
	StartedAt time.Time
}

// Manager runs the probe workers of one pod: at most one per container
// name and Kind, for the container ID last given to Sync.
//
// Guarantees:
//   - Reports go to the callback given to NewManager, called from worker
//     goroutines, possibly concurrently; it must not block (hand the
//     report to a mailbox).
//   - Every report names the container ID it is about. A worker stopped by
//     Sync may still deliver one report after Sync returns; compare IDs.
//     After Stop returns, no report follows.
//   - Sync and Stop are safe for concurrent use; after Stop, Sync starts
//     nothing.
type Manager struct {
	pod    *corev1.Pod
	prober Prober
	clock  clock.Clock
	report func(Report)

	mu      sync.Mutex
	stopped bool
	workers map[workerKey]*workerRun
	wg      sync.WaitGroup
}

type workerKey struct {
	name string
	kind Kind
}

type workerRun struct {
	id     string
	cancel context.CancelFunc
}

// NewManager returns a Manager for pod, probing with p and scheduling on
// clk (nil: the real clock). It starts nothing.
func NewManager(pod *corev1.Pod, p Prober, clk clock.Clock, report func(Report)) *Manager {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Manager{pod: pod, prober: p, clock: clk, report: report, workers: make(map[workerKey]*workerRun)}
}

// Sync makes the workers match running, the pod's running containers
// with probes (podIP as in Target.PodIP): for each, the startup worker
// until StartupDone, then the liveness and readiness workers. Workers of
// containers not listed, of another container ID, or no longer wanted
// are stopped (Sync does not wait for them to end). A worker that ended on
// its own (startup passed, liveness failed) is not restarted for the same
// container ID.
//
// ctx's values reach the workers; its end does not stop them (Stop does).
func (m *Manager) Sync(ctx context.Context, podIP string, running []Running) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	want := make(map[workerKey]bool)
	for _, c := range running {
		if c.Container == nil {
			continue
		}
		t := Target{Pod: m.pod, Container: c.Container, ContainerID: c.ID, PodIP: podIP}
		for kind, p := range wantedProbes(c) {
			k := workerKey{c.Name, kind}
			want[k] = true
			if w, ok := m.workers[k]; ok {
				if w.id == c.ID {
					continue
				}
				w.cancel()
			}
			m.workers[k] = m.start(ctx, kind, p, t, c.StartedAt)
		}
	}
	for k, w := range m.workers {
		if !want[k] {
			w.cancel()
			delete(m.workers, k)
		}
	}
}

// wantedProbes are the probes of c that should run now.
func wantedProbes(c Running) map[Kind]*corev1.Probe {
	out := make(map[Kind]*corev1.Probe, 2)
	spec := c.Container
	if spec.StartupProbe != nil && !c.StartupDone {
		out[Startup] = spec.StartupProbe
		return out
	}
	if spec.LivenessProbe != nil {
		out[Liveness] = spec.LivenessProbe
	}
	if spec.ReadinessProbe != nil {
		out[Readiness] = spec.ReadinessProbe
	}
	return out
}

// start runs a worker in a goroutine. m.mu must be held.
func (m *Manager) start(ctx context.Context, kind Kind, p *corev1.Probe, t Target, startedAt time.Time) *workerRun {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &workerRun{id: t.ContainerID, cancel: cancel}
	t.Kind = kind
	wk := &Worker{Kind: kind, Probe: p, Target: t, Prober: m.prober, Report: m.report, Clock: m.clock, StartedAt: startedAt}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		wk.Run(ctx)
	}()
	return w
}

// Stop stops every worker and waits for them to end. Idempotent.
func (m *Manager) Stop() {
	m.mu.Lock()
	m.stopped = true
	for k, w := range m.workers {
		w.cancel()
		delete(m.workers, k)
	}
	m.mu.Unlock()
	m.wg.Wait()
}
