package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"
)

// Options configure an Injector. The zero value is usable.
type Options struct {
	// Clock drives latencies, downtimes and the reorder window (default:
	// the real clock).
	Clock clock.WithTicker
	// Logger gets one debug line per injected fault and an info line per
	// restart (default: none).
	Logger *zap.Logger
	// Restart carries out a restart on the runtime's state; it is called
	// after the calls and streams in flight were cut, without the
	// Injector's lock. A runtime that cannot lose its state (a proxy in
	// front of a real runtime) leaves it nil, and New then refuses plans
	// with restart modes other than RestartKeep.
	Restart func(RestartMode)
}

// Injector injects a Plan's faults into the calls of a gRPC CRI server,
// through its interceptors (UnaryServerInterceptor and
// StreamServerInterceptor), and counts them.
//
// Guarantees:
//   - Determinism: the n-th call of a method gets DecideCall(plan, seed,
//     method, n), the k-th event of the stream opened by the n-th
//     GetContainerEvents call DecideEvent(..., n, k), and the n-th call
//     overall restarts the runtime if DecideRestart(..., n). So the same
//     sequence of calls gets the same faults in every run with the same
//     seed; only the interleaving of concurrent calls (which call is the
//     n-th) depends on scheduling.
//   - A fault "before" (error, hang, a downtime's refusal) never reaches
//     the runtime: the call has no effect. Latency is waited before the
//     call, on the Clock; a caller giving up during it leaves no effect.
//   - Every injected fault is counted (Counts) and logged at debug level.
//
// Safe for concurrent use.
type Injector struct {
	plan      Plan
	seed      uint64
	clock     clock.WithTicker
	log       *zap.Logger
	onRestart func(RestartMode)

	mu        sync.Mutex
	calls     map[string]uint64 // per method: calls so far
	total     uint64            // calls so far, all methods
	downUntil time.Time
	inflight  map[uint64]context.CancelCauseFunc
	nextID    uint64
	counts    map[countKey]int64
}

// errRestarted is the cause of the contexts of calls cut by a restart.
var errRestarted = errors.New("runtime restarted (injected fault)")

// New returns an Injector for plan p with the given seed.
func New(p *Plan, seed uint64, opts Options) (*Injector, error) {
	if p == nil {
		p = &Plan{}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("fault plan: %w", err)
	}
	if m := p.Restart.Mode.orKeep(); p.Restart.any() && m != RestartKeep && opts.Restart == nil {
		return nil, fmt.Errorf("fault plan: restart mode %q needs a runtime that can lose its state (the simulated runtime); in front of a real runtime only mode %q (an outage) can be injected", m, RestartKeep)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Injector{
		plan: *p, seed: seed, clock: opts.Clock, log: opts.Logger, onRestart: opts.Restart,
		calls: map[string]uint64{}, inflight: map[uint64]context.CancelCauseFunc{}, counts: map[countKey]int64{},
	}, nil
}

// Seed returns the seed the Injector decides with.
func (i *Injector) Seed() uint64 { return i.seed }

// Plan returns a copy of the plan.
func (i *Injector) Plan() Plan { return i.plan }

// call is one intercepted call in flight.
type call struct {
	Call
	id uint64
}

// admit numbers a call of method, carries out the restart it may trigger,
// and decides its fault. A call refused because the runtime is down gets
// an Unavailable error. Otherwise the returned context is the call's: it
// is cut by a restart; release must be called when the call ends.
func (i *Injector) admit(ctx context.Context, method string) (context.Context, *call, func(), error) {
	i.mu.Lock()
	n, g := i.calls[method], i.total
	i.calls[method], i.total = n+1, g+1
	i.mu.Unlock()
	if DecideRestart(i.plan.Restart, i.seed, g) {
		i.restart(i.plan.Restart.Mode.orKeep(), time.Duration(i.plan.Restart.Downtime), fmt.Sprintf("call #%d overall (%s #%d)", g, method, n))
	}
	c := &call{Call: DecideCall(&i.plan, i.seed, method, n)}

	i.mu.Lock()
	if i.clock.Now().Before(i.downUntil) {
		until := i.downUntil
		i.mu.Unlock()
		i.injected(KindDown, c.Call, zap.Time("downUntil", until))
		return nil, nil, nil, status.Errorf(codes.Unavailable, "injected fault: runtime restarting until %s (%s #%d)", until.Format(time.RFC3339Nano), method, n)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	c.id = i.nextID
	i.nextID++
	i.inflight[c.id] = cancel
	i.mu.Unlock()
	release := func() {
		i.mu.Lock()
		delete(i.inflight, c.id)
		i.mu.Unlock()
		cancel(nil)
	}
	return ctx, c, release, nil
}

// before carries out what happens to c before it reaches the runtime: its
// latency, then an error or a hang. A non-nil error ends the call there.
func (i *Injector) before(ctx context.Context, c *call) error {
	if c.Delay > 0 {
		i.injected(KindLatency, c.Call, zap.Duration("delay", c.Delay))
		t := i.clock.NewTimer(c.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctxStatus(ctx, fmt.Sprintf("during an injected latency of %v", c.Delay))
		case <-t.C():
		}
	}
	switch c.Action {
	case FailBefore:
		i.injected(KindError, c.Call, zap.Stringer("code", c.Code))
		return status.Errorf(c.Code, "injected fault: %s #%d failed before reaching the runtime", c.Method, c.N)
	case HangBefore:
		i.injected(KindHang, c.Call)
		<-ctx.Done()
		return ctxStatus(ctx, "hung by an injected fault before reaching the runtime")
	}
	return nil
}

// after carries out what happens to c's reply once the runtime served it.
func (i *Injector) after(ctx context.Context, c *call) error {
	switch c.Action {
	case FailAfter:
		i.injected(KindErrorAfter, c.Call, zap.Stringer("code", c.Code))
		return status.Errorf(c.Code, "injected fault: %s #%d took effect, its reply was replaced by this error", c.Method, c.N)
	case HangAfter:
		i.injected(KindHangAfter, c.Call)
		<-ctx.Done()
		return ctxStatus(ctx, "took effect, its reply was withheld by an injected fault")
	}
	return nil
}

// outcome is the error the caller sees for a call that ended with err: a
// call cut by a restart fails with Unavailable whatever the runtime said.
func outcome(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errRestarted) {
		return status.Error(codes.Unavailable, "injected fault: the runtime restarted during the call")
	}
	return err
}

// ctxStatus is the gRPC error of a call whose context ended.
func ctxStatus(ctx context.Context, what string) error {
	if errors.Is(context.Cause(ctx), errRestarted) {
		return status.Errorf(codes.Unavailable, "injected fault: the runtime restarted (the call was %s)", what)
	}
	s := status.FromContextError(ctx.Err())
	return status.Errorf(s.Code(), "%s: %s", what, s.Message())
}

// Restart restarts the runtime now, on demand, as a plan's restart does:
// calls and event streams in flight are cut with Unavailable, the runtime
// is down for downtime, and mode decides what survives (Options.Restart).
func (i *Injector) Restart(mode RestartMode, downtime time.Duration) error {
	if !mode.Valid() {
		return fmt.Errorf("restart mode %q: want %s, %s or %s", mode, RestartKeep, RestartReboot, RestartWipe)
	}
	mode = mode.orKeep()
	if mode != RestartKeep && i.onRestart == nil {
		return fmt.Errorf("restart mode %q: this runtime cannot lose its state; only %q", mode, RestartKeep)
	}
	i.restart(mode, downtime, "on demand")
	return nil
}

func (i *Injector) restart(mode RestartMode, downtime time.Duration, why string) {
	i.mu.Lock()
	if until := i.clock.Now().Add(downtime); until.After(i.downUntil) {
		i.downUntil = until
	}
	cut := make([]context.CancelCauseFunc, 0, len(i.inflight))
	for id, cancel := range i.inflight {
		cut = append(cut, cancel)
		delete(i.inflight, id)
	}
	i.counts[countKey{KindRestart, string(mode)}]++
	i.mu.Unlock()
	i.log.Info("injected runtime restart", zap.String("mode", string(mode)), zap.Duration("downtime", downtime),
		zap.Int("callsCut", len(cut)), zap.String("trigger", why))
	for _, cancel := range cut {
		cancel(errRestarted)
	}
	if i.onRestart != nil {
		i.onRestart(mode)
	}
}

// injected counts and logs one fault of call c.
func (i *Injector) injected(k Kind, c Call, fields ...zap.Field) {
	i.count(k, c.Method)
	if ce := i.log.Check(zap.DebugLevel, "injected CRI fault"); ce != nil {
		ce.Write(append([]zap.Field{zap.String("kind", string(k)), zap.String("method", c.Method), zap.Uint64("call", c.N)}, fields...)...)
	}
}
