package imagegc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/utils/clock"
)

// Manager garbage-collects images of one runtime; see the package doc for
// what it guarantees. It is safe for concurrent use.
type Manager struct {
	rt       Runtime
	policy   Policy
	clock    clock.WithTicker
	capacity CapacityFunc
	period   time.Duration
	sandbox  nameSet
	events   EventFunc
	onRemove func(Removal)
	log      *zap.Logger

	// mu serialises passes and guards records (by image ID).
	mu      sync.Mutex
	records map[string]*record
}

// Option configures a Manager.
type Option func(*Manager)

// WithClock sets the clock (default: the real clock).
func WithClock(c clock.WithTicker) Option { return func(m *Manager) { m.clock = c } }

// WithCapacity sets how the image filesystem's capacity is measured
// (default: StatfsCapacity).
func WithCapacity(f CapacityFunc) Option { return func(m *Manager) { m.capacity = f } }

// WithPeriod sets how often Run collects (default DefaultPeriod; values <= 0
// are ignored).
func WithPeriod(d time.Duration) Option {
	return func(m *Manager) {
		if d > 0 {
			m.period = d
		}
	}
}

// WithSandboxImages names the sandbox (pause) images, by ID, tag or digest
// reference exactly as the runtime reports them; they are never removed.
func WithSandboxImages(refs ...string) Option {
	return func(m *Manager) {
		for _, r := range refs {
			m.sandbox.add(r)
		}
	}
}

// WithEvents sets the sink of the FreeDiskSpaceFailed and ImageGCFailed
// events (default: none).
func WithEvents(f EventFunc) Option { return func(m *Manager) { m.events = f } }

// WithOnRemove sets a function called after each successful removal, during
// the pass (default: none). It must not block.
func WithOnRemove(f func(Removal)) Option { return func(m *Manager) { m.onRemove = f } }

// WithLogger sets the logger (default: zap.NewNop).
func WithLogger(l *zap.Logger) Option {
	return func(m *Manager) {
		if l != nil {
			m.log = l
		}
	}
}

// New returns a Manager for rt under policy, or the policy's validation
// error. It does no I/O.
func New(rt Runtime, policy Policy, opts ...Option) (*Manager, error) {
	if rt == nil {
		return nil, errors.New("imagegc: nil runtime")
	}
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("imagegc: invalid policy: %w", err)
	}
	m := &Manager{
		rt:       rt,
		policy:   policy,
		clock:    clock.RealClock{},
		capacity: StatfsCapacity,
		period:   DefaultPeriod,
		sandbox:  nameSet{},
		log:      zap.NewNop(),
		records:  make(map[string]*record),
	}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Run collects at once, then every period, until ctx is done. Failed passes
// are logged (and reported as events by GarbageCollect); they do not stop
// Run.
func (m *Manager) Run(ctx context.Context) {
	t := m.clock.NewTicker(m.period)
	defer t.Stop()
	for {
		if res, err := m.GarbageCollect(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("image garbage collection failed", zap.Error(err),
				zap.Int("removed", len(res.Removed)), zap.Uint64("bytesFreed", res.BytesFreed))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}
