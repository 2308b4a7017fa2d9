package eviction

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeStats serves a node whose state tests change; every Get stamps the
// clock's time and signals on gets.
type fakeStats struct {
	mu     sync.Mutex
	clock  *clocktesting.FakeClock
	node   node
	usages []usage
	err    error
	calls  int
	gets   chan struct{}
}

func (f *fakeStats) Get(context.Context) (*statsv1alpha1.Summary, error) {
	f.mu.Lock()
	f.calls++
	n, us, err := f.node, f.usages, f.err
	f.mu.Unlock()
	defer func() {
		if f.gets != nil {
			f.gets <- struct{}{}
		}
	}()
	if err != nil {
		return nil, err
	}
	n.at = f.clock.Now()
	return mkSummary(n, us...), nil
}

func (f *fakeStats) set(mod func(*node)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mod(&f.node)
}

// fakeReclaimer applies free to the node when called.
type fakeReclaimer struct {
	stats   *fakeStats
	free    func(*node)
	signals []Signal
	err     error
}

func (r *fakeReclaimer) Reclaim(_ context.Context, s Signal) error {
	r.signals = append(r.signals, s)
	if r.free != nil {
		r.stats.set(r.free)
	}
	return r.err
}

// evictLog records evictions; failing names pods whose eviction fails.
type evictLog struct {
	mu      sync.Mutex
	failing map[string]bool
	evicted []Eviction
}

func (l *evictLog) evict(_ context.Context, pod *corev1.Pod, reason, message string, grace time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failing[pod.Name] {
		return errors.New("kill failed")
	}
	l.evicted = append(l.evicted, Eviction{Pod: pod, Reason: reason, Message: message, GracePeriod: grace})
	return nil
}

func (l *evictLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return names(l.evicted)
}

type mgrHarness struct {
	clock *clocktesting.FakeClock
	stats *fakeStats
	log   *evictLog
	pods  []*corev1.Pod
	m     *Manager
}

func newMgrHarness(t *testing.T, cfg Config, opts ...Option) *mgrHarness {
	t.Helper()
	c := clocktesting.NewFakeClock(t0)
	h := &mgrHarness{clock: c, stats: &fakeStats{clock: c, node: plenty()}, log: &evictLog{}}
	h.pods = []*corev1.Pod{mkPod(podSpec{name: "a"}), mkPod(podSpec{name: "b", memReq: "1Gi"}),
		mkPod(podSpec{name: "static", annotations: map[string]string{"kubernetes.io/config.source": "file"}})}
	h.stats.usages = []usage{{pod: "a", mem: 100 * Mi, disk: Gi}, {pod: "b", mem: 500 * Mi, disk: 2 * Gi},
		{pod: "static", mem: 3 * Gi, disk: 9 * Gi}}
	m, err := New(cfg, h.stats, func() []*corev1.Pod { return h.pods }, h.log.evict, append([]Option{WithClock(c)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.m = m
	return h
}

func TestSynchronizeDiskReclaim(t *testing.T) {
	for _, tc := range []struct {
		name         string
		reclaimer    bool
		free         func(*node)
		reclaimErr   error
		wantResolved bool
		wantEvicted  []string
		wantErr      bool
	}{
		{"reclaim relieves the pressure: no eviction", true, func(n *node) { n.fsAvail = 50 * Gi }, nil, true, nil, false},
		{"reclaim below minimum: evict", true, func(n *node) { n.fsAvail = 8 * Gi }, nil, false, []string{"b"}, false},
		{"reclaim fails: evict", true, nil, errors.New("gc broke"), false, []string{"b"}, true},
		{"no reclaimer: evict at once", false, nil, nil, false, []string{"b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *fakeReclaimer
			var events []string
			h := newMgrHarness(t, mustConfig(t, nil), WithEvents(func(typ, reason, msg string) {
				events = append(events, typ+" "+reason+" "+msg)
			}))
			if tc.reclaimer {
				r = &fakeReclaimer{stats: h.stats, free: tc.free, err: tc.reclaimErr}
				WithReclaimer(r)(h.m) // the reclaimer needs the harness's stats
			}
			h.stats.set(func(n *node) { n.fsAvail = 5 * Gi }) // < 10% of 100Gi
			p, err := h.m.Synchronize(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Synchronize error = %v, want error %v", err, tc.wantErr)
			}
			if tc.reclaimer && (!p.Reclaimed || !slices.Equal(r.signals, []Signal{SignalNodeFsAvailable})) {
				t.Errorf("reclaimed %v, signals %v", p.Reclaimed, r.signals)
			}
			if p.Resolved != tc.wantResolved {
				t.Errorf("resolved = %v, want %v", p.Resolved, tc.wantResolved)
			}
			if got := h.log.names(); !slices.Equal(got, tc.wantEvicted) {
				t.Errorf("evicted %v, want %v", got, tc.wantEvicted)
			}
			// The kubelet's node event, whatever the reclaim did.
			if want := []string{"Warning EvictionThresholdMet Attempting to reclaim ephemeral-storage"}; !slices.Equal(events, want) {
				t.Errorf("events %q, want %q", events, want)
			}
			// DiskPressure holds either way: it was observed this pass.
			if !slices.Equal(h.m.Pressure(), []corev1.NodeConditionType{corev1.NodeDiskPressure}) {
				t.Errorf("pressure = %v", h.m.Pressure())
			}
		})
	}
}

func TestSynchronizeTriesNextCandidate(t *testing.T) {
	h := newMgrHarness(t, mustConfig(t, nil))
	h.log.failing = map[string]bool{"a": true}
	h.stats.set(func(n *node) { n.memAvail = 50 * Mi })
	p, err := h.m.Synchronize(context.Background())
	if err == nil {
		t.Error("failed eviction not reported")
	}
	if got := h.log.names(); !slices.Equal(got, []string{"b"}) || p.Evicted == nil || p.Evicted.Pod.Name != "b" {
		t.Errorf("evicted %v (pass %v), want [b]", got, p.Evicted)
	}
}

func TestSynchronizeSummaryErrorKeepsConditions(t *testing.T) {
	h := newMgrHarness(t, mustConfig(t, nil))
	h.stats.set(func(n *node) { n.memAvail = 50 * Mi })
	if _, err := h.m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.stats.mu.Lock()
	h.stats.err = errors.New("cadvisor down")
	h.stats.mu.Unlock()
	h.clock.Step(time.Hour)
	if _, err := h.m.Synchronize(context.Background()); err == nil {
		t.Fatal("summary error not reported")
	}
	if !slices.Equal(h.m.Pressure(), []corev1.NodeConditionType{corev1.NodeMemoryPressure}) || len(h.log.names()) != 1 {
		t.Errorf("pressure %v evicted %v after a failed pass", h.m.Pressure(), h.log.names())
	}
}

func TestConditionsBeforeAndAfter(t *testing.T) {
	h := newMgrHarness(t, mustConfig(t, hardOnly(map[string]string{"memory.available": "100Mi", "pid.available": "1%"})))
	for _, c := range h.m.Conditions() {
		if c.Status != corev1.ConditionFalse || !c.LastTransitionTime.IsZero() {
			t.Errorf("before any pass: %+v", c)
		}
	}
	h.stats.set(func(n *node) { n.memAvail = 50 * Mi; n.maxPID = 1000; n.procs = 999 })
	if _, err := h.m.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[corev1.NodeConditionType][2]string{
		corev1.NodeMemoryPressure: {"True", "KubeletHasInsufficientMemory"},
		corev1.NodeDiskPressure:   {"False", "KubeletHasNoDiskPressure"},
		corev1.NodePIDPressure:    {"True", "KubeletHasInsufficientPID"},
	}
	conds := h.m.Conditions()
	if len(conds) != 3 {
		t.Fatalf("conditions = %+v", conds)
	}
	for _, c := range conds {
		if w := want[c.Type]; string(c.Status) != w[0] || c.Reason != w[1] || c.Message == "" || !c.LastHeartbeatTime.Time.Equal(t0) {
			t.Errorf("%s = %s %s %q at %v, want %v", c.Type, c.Status, c.Reason, c.Message, c.LastHeartbeatTime, w)
		}
	}
	taints := h.m.Taints()
	if len(taints) != 2 || taints[0].Key != corev1.TaintNodeMemoryPressure || taints[1].Key != corev1.TaintNodePIDPressure ||
		taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("taints = %+v", taints)
	}
}

// TestRun drives Run with a fake clock: memory runs low, the BestEffort pod
// is evicted and MemoryPressure set; when memory comes back the condition
// holds for the transition period, then clears.
func TestRun(t *testing.T) {
	type change struct {
		conds  []corev1.NodeCondition
		taints []corev1.Taint
	}
	changes := make(chan change, 10)
	h := newMgrHarness(t, mustConfig(t, nil), WithOnChange(func(c []corev1.NodeCondition, ts []corev1.Taint) {
		changes <- change{c, ts}
	}))
	h.stats.gets = make(chan struct{})
	h.stats.set(func(n *node) { n.memAvail = 50 * Mi })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.m.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}()

	waitGet := func() {
		t.Helper()
		select {
		case <-h.stats.gets:
		case <-time.After(10 * time.Second):
			t.Fatal("no pass")
		}
	}
	waitChange := func(wantMemPressure bool) {
		t.Helper()
		select {
		case c := <-changes:
			mem := c.conds[0]
			if mem.Type != corev1.NodeMemoryPressure || (mem.Status == corev1.ConditionTrue) != wantMemPressure {
				t.Fatalf("OnChange conditions %+v, want MemoryPressure %v", c.conds, wantMemPressure)
			}
			if (len(c.taints) == 1 && c.taints[0].Key == corev1.TaintNodeMemoryPressure) != wantMemPressure {
				t.Fatalf("OnChange taints %+v", c.taints)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no OnChange")
		}
	}
	// step advances the clock and waits for the pass the tick triggers.
	// The ticker's channel holds the tick while a pass is still running,
	// and passes are serialised, so when the next pass reads the stats the
	// previous one has finished.
	step := func(d time.Duration) {
		t.Helper()
		h.clock.Step(d)
		waitGet()
	}

	waitGet()
	waitChange(true)
	// The pass runs to its end before the next tick: the eviction is
	// recorded by the time Run waits again.
	step(DefaultPeriod)
	if got := h.log.names(); len(got) < 1 || got[0] != "a" {
		t.Fatalf("evicted %v, want a first", got)
	}
	h.stats.set(func(n *node) { n.memAvail = 2 * Gi })
	step(DefaultPeriod) // relieved at t0+20s; last seen at t0+10s
	if !slices.Equal(h.m.Pressure(), []corev1.NodeConditionType{corev1.NodeMemoryPressure}) {
		t.Fatalf("pressure cleared before the transition period: %v", h.m.Pressure())
	}
	for h.clock.Now().Before(t0.Add(10*time.Second + DefaultPressureTransitionPeriod - DefaultPeriod)) {
		step(DefaultPeriod)
	}
	if len(h.m.Pressure()) != 1 {
		t.Fatalf("pressure cleared at %v", h.clock.Now().Sub(t0))
	}
	step(DefaultPeriod) // t0+10s+5m
	waitChange(false)
	if len(h.m.Pressure()) != 0 || len(h.m.Taints()) != 0 {
		t.Errorf("pressure %v taints %v after the transition period", h.m.Pressure(), h.m.Taints())
	}
	if got := h.log.names(); slices.Contains(got, "static") {
		t.Errorf("static pod evicted: %v", got)
	}
}

func TestNewRejectsMissingDeps(t *testing.T) {
	stats := &fakeStats{clock: clocktesting.NewFakeClock(t0)}
	pods := func() []*corev1.Pod { return nil }
	evict := (&evictLog{}).evict
	for name, f := range map[string]func() (*Manager, error){
		"stats": func() (*Manager, error) { return New(Config{}, nil, pods, evict) },
		"pods":  func() (*Manager, error) { return New(Config{}, stats, nil, evict) },
		"evict": func() (*Manager, error) { return New(Config{}, stats, pods, nil) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("New without %s succeeded", name)
		}
	}
}
