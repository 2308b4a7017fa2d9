package eviction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// DefaultPeriod is how often Run synchronises, as the kubelet's eviction
// monitoring interval.
const DefaultPeriod = 10 * time.Second

// Manager carries out node-pressure eviction: each pass reads the stats
// summary and the pods, runs Decide, publishes the pressure conditions, and
// then either reclaims node-level resources or evicts at most one pod.
//
// Guarantees:
//   - Passes are serialised: Run and direct Synchronize calls never overlap.
//   - At most one pod is evicted per pass: the first candidate whose
//     EvictFunc returns nil. Critical and static pods are never evicted.
//   - When node-level reclaim applies and a Reclaimer is set, it runs first;
//     the summary is then read again, and no pod is evicted if every
//     threshold that acted is resolved (minimum reclaim included).
//   - A failed summary read changes nothing: conditions keep their last
//     value and no pod is evicted.
//   - OnChange is called after a pass that changed the pressure
//     conditions, before any reclaim or eviction of that pass; it may call
//     Conditions, Taints and Pressure, but not Synchronize.
//
// State lives in memory: after a restart, soft thresholds' grace periods and
// the transition period start again.
type Manager struct {
	cfg       Config
	stats     SummaryProvider
	pods      PodsFunc
	evict     EvictFunc
	reclaimer Reclaimer
	clock     clock.WithTicker
	period    time.Duration
	onChange  func([]corev1.NodeCondition, []corev1.Taint)
	onEvicted func(Signal)
	events    EventFunc
	log       *zap.Logger

	pass sync.Mutex // serialises passes; guards state

	state State

	mu          sync.RWMutex // guards the fields below
	pressure    []corev1.NodeConditionType
	transitions map[corev1.NodeConditionType]time.Time
	synced      time.Time
}

// Option configures a Manager.
type Option func(*Manager)

// WithClock sets the clock (default: the real clock).
func WithClock(c clock.WithTicker) Option { return func(m *Manager) { m.clock = c } }

// WithPeriod sets how often Run synchronises (default DefaultPeriod; values
// <= 0 are ignored).
func WithPeriod(d time.Duration) Option {
	return func(m *Manager) {
		if d > 0 {
			m.period = d
		}
	}
}

// WithReclaimer sets the node-level reclaimer (default: none, so disk
// pressure evicts pods at once).
func WithReclaimer(r Reclaimer) Option { return func(m *Manager) { m.reclaimer = r } }

// WithOnEvicted sets a function called with the signal of each pod evicted
// (kubelet_evictions). It must not block.
func WithOnEvicted(f func(Signal)) Option { return func(m *Manager) { m.onEvicted = f } }

// EventFunc receives the events the kubelet's eviction manager records on
// its Node object; the caller binds it to an EventRecorder and the node's
// reference. It is called synchronously during a pass and must not block.
type EventFunc func(eventType, reason, message string)

// WithEvents sets the sink of the kubelet's EvictionThresholdMet event
// (Warning, "Attempting to reclaim <resource>"), recorded by each pass that
// finds a threshold met, before reclaiming or evicting.
func WithEvents(f EventFunc) Option { return func(m *Manager) { m.events = f } }

// WithOnChange sets a function called with the new conditions and taints
// after a pass that changed them. It must not block.
func WithOnChange(f func(conditions []corev1.NodeCondition, taints []corev1.Taint)) Option {
	return func(m *Manager) { m.onChange = f }
}

// WithLogger sets the logger (default: zap.NewNop).
func WithLogger(l *zap.Logger) Option {
	return func(m *Manager) {
		if l != nil {
			m.log = l
		}
	}
}

// New returns a Manager for cfg (from ParseConfig). It does no I/O.
func New(cfg Config, stats SummaryProvider, pods PodsFunc, evict EvictFunc, opts ...Option) (*Manager, error) {
	switch {
	case stats == nil:
		return nil, errors.New("eviction: nil summary provider")
	case pods == nil:
		return nil, errors.New("eviction: nil pods func")
	case evict == nil:
		return nil, errors.New("eviction: nil evict func")
	}
	m := &Manager{
		cfg: cfg, stats: stats, pods: pods, evict: evict,
		clock:       clock.RealClock{},
		period:      DefaultPeriod,
		log:         zap.NewNop(),
		transitions: map[corev1.NodeConditionType]time.Time{},
	}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Run synchronises at once, then every period, until ctx is done. Failed
// passes are logged; they do not stop Run.
func (m *Manager) Run(ctx context.Context) {
	t := m.clock.NewTicker(m.period)
	defer t.Stop()
	for {
		if _, err := m.Synchronize(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("eviction pass failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Pass is what one Synchronize did.
type Pass struct {
	Decision Decision
	// Reclaimed is set when node-level reclaim ran; Resolved when it was
	// enough, so no pod was evicted.
	Reclaimed, Resolved bool
	// Evicted is the pod evicted, nil when none.
	Evicted *Eviction
}

// Synchronize runs one pass. Its error joins the failures of the pass (the
// summary, the reclaim, each eviction tried); a pass that evicted a pod
// after some failed evictions still reports them.
func (m *Manager) Synchronize(ctx context.Context) (Pass, error) {
	m.pass.Lock()
	defer m.pass.Unlock()
	now := m.clock.Now()
	sum, err := m.stats.Get(ctx)
	if err != nil {
		return Pass{}, fmt.Errorf("eviction: get stats summary: %w", err)
	}
	d := Decide(Input{Config: m.cfg, State: m.state, Observations: ObserveSummary(sum), Pods: m.pods(), Now: now})
	m.state = d.State
	if m.publish(d.Pressure, now) && m.onChange != nil {
		m.onChange(m.Conditions(), m.Taints())
	}
	p := Pass{Decision: d}
	if d.Starved == nil {
		return p, nil
	}
	t := *d.Starved
	log := m.log.With(zap.Stringer("threshold", t), zap.String("resource", string(t.Signal.Resource())))
	if m.events != nil {
		m.events(corev1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim "+string(t.Signal.Resource()))
	}
	var errs []error
	if d.Reclaim && m.reclaimer != nil {
		log.Info("eviction threshold met: reclaiming node-level resources")
		p.Reclaimed = true
		if err := m.reclaimer.Reclaim(ctx, t.Signal); err != nil {
			errs = append(errs, fmt.Errorf("eviction: reclaim for %s: %w", t.Signal, err))
		}
		after, err := m.stats.Get(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("eviction: get stats summary after reclaim: %w", err))
		} else if Resolved(d.Met, ObserveSummary(after)) {
			log.Info("node-level reclaim relieved the pressure; no pod evicted")
			p.Resolved = true
			return p, errors.Join(errs...)
		}
	}
	if len(d.Candidates) == 0 {
		log.Warn("eviction threshold met but no pod can be evicted")
	}
	for i := range d.Candidates {
		e := d.Candidates[i]
		if err := m.evict(ctx, e.Pod, e.Reason, e.Message, e.GracePeriod); err != nil {
			errs = append(errs, fmt.Errorf("eviction: evict pod %s/%s (%s): %w", e.Pod.Namespace, e.Pod.Name, e.Pod.UID, err))
			continue
		}
		log.Info("evicted pod", zap.String("pod", e.Pod.Namespace+"/"+e.Pod.Name),
			zap.Duration("grace", e.GracePeriod), zap.String("message", e.Message))
		if m.onEvicted != nil {
			m.onEvicted(e.Signal)
		}
		p.Evicted = &e
		break
	}
	return p, errors.Join(errs...)
}

// publish records the pressure conditions of a pass and reports whether
// they changed.
func (m *Manager) publish(pressure []corev1.NodeConditionType, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := !slices.Equal(m.pressure, pressure)
	first := m.synced.IsZero()
	for _, c := range pressureOrder {
		if first || slices.Contains(m.pressure, c) != slices.Contains(pressure, c) {
			m.transitions[c] = now
		}
	}
	m.pressure = slices.Clone(pressure)
	m.synced = now
	return changed
}

// Pressure is the pressure conditions that are true now.
func (m *Manager) Pressure() []corev1.NodeConditionType {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.pressure)
}

// Conditions are the MemoryPressure, DiskPressure and PIDPressure node
// conditions, with the kubelet's reasons. LastHeartbeatTime is the last
// pass; LastTransitionTime the pass that last changed the condition (the
// first pass for one never changed). Before the first pass all are false
// with zero times.
func (m *Manager) Conditions() []corev1.NodeCondition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	conds := NodeConditions(m.pressure)
	for i := range conds {
		if !m.synced.IsZero() {
			conds[i].LastHeartbeatTime = metav1.NewTime(m.synced)
			conds[i].LastTransitionTime = metav1.NewTime(m.transitions[conds[i].Type])
		}
	}
	return conds
}

// Taints are the NoSchedule taints of the pressure conditions that are true.
func (m *Manager) Taints() []corev1.Taint { return Taints(m.Pressure()) }

// Admit is Admit under the current pressure conditions.
func (m *Manager) Admit(pod *corev1.Pod) (ok bool, reason, message string) {
	return Admit(pod, m.Pressure())
}
