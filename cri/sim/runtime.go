package sim

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/cri/faults"
)

// Runtime is an in-memory CRI v1 runtime and image service. It implements
// runtimeapi.RuntimeServiceServer and runtimeapi.ImageServiceServer and can
// be served with Serve or InProcess, or called directly.
//
// Guarantees:
//   - All methods are safe for concurrent use. One mutex guards all state;
//     no RPC holds it while waiting (latency, StopContainer's grace period).
//   - State changes are linearizable, and GetContainerEvents subscribers
//     see them in that order.
//   - No goroutine per sandbox or container: a pending exit is one clock
//     timer, cancelled when the container stops or is removed.
//   - Nothing is tied to a client connection: clients may come and go.
//   - With a non-zero Options.Latency for a method, a call whose context
//     ends during the delay has no effect.
//   - Responses are fresh copies; callers may modify them.
//   - A List call whose filter pins an ID (sandbox, container or, for
//     containers, sandbox ID) or the label io.kubernetes.pod.uid costs
//     in proportion to the objects so pinned, not to all objects.
//
// The behaviour of a container is set by its environment variables, see
// EnvExitAfter and the other Env* constants. Misuse of the CRI that a
// correct kubelet never commits is recorded (see Info.Violations).
type Runtime struct {
	// Exec, Attach, PortForward, CheckpointContainer, CheckpointPod and
	// RestorePod are not simulated and answer Unimplemented.
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	opts     Options
	clock    clock.WithTicker
	log      *zap.Logger
	hostIP   netip.Addr
	handlers map[string]bool
	events   *broker
	faults   *faults.Injector // nil without Options.Faults

	mu              sync.Mutex
	closed          bool
	sandboxes       map[string]*sandbox
	containers      map[string]*container
	sandboxesByPod  labelIndex[*sandbox]   // by label LabelPodUID
	containersByPod labelIndex[*container] // by label LabelPodUID
	sandboxesByUID  map[string][]*sandbox  // by metadata uid, if not found so by sandboxesByPod (sandbox_pods.go)
	readySandboxes  int
	running         int
	created         uint64 // objects ever created; gives their order
	ipam            *ipam
	keySets         *keySets // of labels and annotations
	images          *imageStore
	violations      []string
	violationCount  int
	restarts        int
}

// maxViolations bounds the violations kept in memory (all are counted).
const maxViolations = 1000

// New returns a Runtime with no sandboxes, containers or images.
func New(opts Options) (*Runtime, error) {
	opts, prefix, host, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	pool, err := newIPAM(prefix)
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		opts:            opts,
		clock:           opts.Clock,
		log:             opts.Logger,
		hostIP:          host,
		handlers:        map[string]bool{"": true},
		events:          newBroker(),
		sandboxes:       make(map[string]*sandbox),
		containers:      make(map[string]*container),
		sandboxesByPod:  newLabelIndex[*sandbox](LabelPodUID),
		containersByPod: newLabelIndex[*container](LabelPodUID),
		sandboxesByUID:  make(map[string][]*sandbox),
		ipam:            pool,
		keySets:         newKeySets(),
		images:          newImageStore(),
	}
	for _, h := range opts.RuntimeHandlers {
		r.handlers[h] = true
	}
	if opts.Faults != nil {
		r.faults, err = faults.New(opts.Faults, opts.FaultSeed, faults.Options{
			Clock: opts.Clock, Logger: opts.Logger.Named("faults"), Restart: r.Restart,
		})
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	return r, nil
}

// Faults returns the injector of Options.Faults (its counts, restarts on
// demand), or nil.
func (r *Runtime) Faults() *faults.Injector { return r.faults }

// Close stops all pending container timers and ends every
// GetContainerEvents stream (with Unavailable, as containerd does when its
// subscription ends). Later RPCs fail with ErrClosed. Close is idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	for _, c := range r.containers {
		c.cancelTimer()
	}
	r.events.close()
	return nil
}

// begin waits the configured latency for method, then locks the runtime.
// On success the caller must call the returned unlock. If ctx ends first
// (or had ended), begin returns the context's error and the call must have
// no effect.
func (r *Runtime) begin(ctx context.Context, method string) (unlock func(), err error) {
	if err := r.wait(ctx, method); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, newErr(ErrClosed, "%s: simulated runtime is closed", method)
	}
	return r.mu.Unlock, nil
}

// wait sleeps Options.Latency[method] on the injected clock.
func (r *Runtime) wait(ctx context.Context, method string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim: %s: %w", method, err)
	}
	d := r.opts.Latency[method]
	if d <= 0 {
		return nil
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("sim: %s canceled during simulated latency of %v: %w", method, d, ctx.Err())
	case <-t.C():
		return nil
	}
}

// timer is the part of clock.Timer the runtime uses.
type timer interface{ Stop() bool }

// afterFunc runs f after d on the injected clock. f must not block on the
// runtime's mutex: a FakeClock calls it while holding its own lock, and
// the runtime takes the clock's lock while holding its mutex.
func (r *Runtime) afterFunc(d time.Duration, f func()) timer {
	if c, ok := r.clock.(clock.WithDelayedExecution); ok {
		return c.AfterFunc(d, f)
	}
	return newGoroutineTimer(r.clock, d, f)
}

// goroutineTimer emulates AfterFunc on clocks without it.
type goroutineTimer struct {
	t    clock.Timer
	stop chan struct{}
	once sync.Once
}

func newGoroutineTimer(c clock.Clock, d time.Duration, f func()) *goroutineTimer {
	g := &goroutineTimer{t: c.NewTimer(d), stop: make(chan struct{})}
	go func() {
		select {
		case <-g.t.C():
			f()
		case <-g.stop:
		}
	}()
	return g
}

func (g *goroutineTimer) Stop() bool {
	g.once.Do(func() { close(g.stop) })
	return g.t.Stop()
}

// now is the current time in Unix nanoseconds.
func (r *Runtime) now() int64 { return r.clock.Now().UnixNano() }

// nextOrder numbers a new sandbox or container. r.mu must be held.
func (r *Runtime) nextOrder() uint64 {
	r.created++
	return r.created
}

// violationLocked records CRI misuse. r.mu must be held.
func (r *Runtime) violationLocked(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.violationCount++
	if len(r.violations) < maxViolations {
		r.violations = append(r.violations, msg)
	}
	r.log.Warn("CRI misuse", zap.String("violation", msg))
}

// Info is the JSON object in StatusResponse.info[InfoKey] when Status is
// called with verbose=true.
type Info struct {
	Sandboxes      int `json:"sandboxes"`
	ReadySandboxes int `json:"readySandboxes"`
	Containers     int `json:"containers"`
	Running        int `json:"running"`
	Images         int `json:"images"`
	PodIPsInUse    int `json:"podIPsInUse"`
	// Violations describe CRI misuse seen, oldest first (at most 1000):
	// StartContainer on a container that is not CREATED, StartContainer
	// or CreateContainer in a sandbox that is not READY (unless a
	// simulated reboot made it so: see Restart), and a second
	// READY sandbox for the same pod UID (label io.kubernetes.pod.uid,
	// else metadata.uid). Never null.
	Violations []string `json:"violations"`
	// ViolationCount counts all violations, including those not kept.
	ViolationCount int `json:"violationCount"`
	// Restarts counts the simulated restarts (Runtime.Restart).
	Restarts int `json:"restarts,omitempty"`
	// Faults counts the faults injected (Options.Faults) by kind.
	Faults map[faults.Kind]int64 `json:"faults,omitempty"`
}

// InfoKey is the key of Info in a verbose StatusResponse.info.
const InfoKey = "sim"

// Info returns the counters and violations that Status reports verbosely.
func (r *Runtime) Info() Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.infoLocked()
}

// Counts returns how many sandboxes and containers the runtime holds,
// without listing them: what a ListPodSandbox and a ListContainers without
// filters would count.
func (r *Runtime) Counts() (sandboxes, containers int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sandboxes), len(r.containers)
}

func (r *Runtime) infoLocked() Info {
	in := Info{
		Sandboxes:      len(r.sandboxes),
		Containers:     len(r.containers),
		Running:        r.running,
		Images:         len(r.images.byID),
		PodIPsInUse:    r.ipam.inUse(),
		Violations:     slices.Clone(r.violations),
		ViolationCount: r.violationCount,
		Restarts:       r.restarts,
	}
	if r.faults != nil {
		in.Faults = r.faults.Totals()
	}
	if in.Violations == nil {
		in.Violations = []string{}
	}
	in.ReadySandboxes = r.readySandboxes
	return in
}
