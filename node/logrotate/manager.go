package logrotate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"sync"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/cri"
)

// Manager rotates the logs of actorlet's running containers; see the package doc for what it
// guarantees. It is safe for concurrent use.
type Manager struct {
	rt         Runtime
	policy     Policy
	clock      clock.WithTicker
	log        *zap.Logger
	onRotation func(Rotation)

	// mu serialises passes.
	mu sync.Mutex
	// paths are the log paths of the running containers of the last pass,
	// by container ID, from ContainerStatus: a container's log path is
	// part of its config and never changes, so each container's status is
	// asked once, not every pass. A pass keeps only the containers it
	// listed. Guarded by mu; pmu guards it against the pass's workers.
	paths map[string]string
	pmu   sync.Mutex
}

// Option configures a Manager.
type Option func(*Manager)

// WithClock sets the clock that paces Run and stamps rotated files (default: the real clock).
func WithClock(c clock.WithTicker) Option { return func(m *Manager) { m.clock = c } }

// WithLogger sets the logger (default: zap.NewNop).
func WithLogger(l *zap.Logger) Option {
	return func(m *Manager) {
		if l != nil {
			m.log = l
		}
	}
}

// WithOnRotation sets a function called after each rotation that changed files, successful
// or not, during the pass (default: none). It may be called from several workers at once and
// must not block.
func WithOnRotation(f func(Rotation)) Option { return func(m *Manager) { m.onRotation = f } }

// New returns a Manager for rt under policy, or the policy's validation error. It does no
// I/O.
func New(rt Runtime, policy Policy, opts ...Option) (*Manager, error) {
	if rt == nil {
		return nil, errors.New("logrotate: nil runtime")
	}
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("logrotate: invalid policy: %w", err)
	}
	m := &Manager{rt: rt, policy: policy, clock: clock.RealClock{}, log: zap.NewNop()}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Run makes a pass at once, then every Policy.MonitorInterval, until ctx is done. Failed
// passes are logged; they do not stop Run. With rotation disabled (Policy.Enabled false) Run
// returns at once.
func (m *Manager) Run(ctx context.Context) {
	if !m.policy.Enabled() {
		return
	}
	t := m.clock.NewTicker(m.policy.MonitorInterval)
	defer t.Stop()
	for {
		if err := m.RotateOnce(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("container log rotation failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// RotateOnce makes one pass: every running container labelled io.actorlet.managed=true whose
// current log is at least Policy.MaxSize bytes has its log rotated. Containers are handled by
// at most Policy.MaxWorkers workers; RotateOnce returns when all are done, with the errors of
// all failed containers joined (each naming its container), or the listing's error.
func (m *Manager) RotateOnce(ctx context.Context) error {
	if !m.policy.Enabled() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	list, err := m.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{cri.LabelManaged: cri.ManagedValue},
	})
	if err != nil {
		return fmt.Errorf("logrotate: list containers: %w", err)
	}
	// The runtime should have filtered; check again, since touching another tenant's or an
	// exited container's files is what must never happen. The pass keeps what it reads of
	// each container, not the listing: a node's workers take a while over their stat calls,
	// and a fleet's nodes, each with a pass under way most of the time, held their listings
	// (labels, annotations and all: about 1.2 KB a container) until the end of the pass.
	var todo []listed
	for _, c := range list {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING && c.GetLabels()[cri.LabelManaged] == cri.ManagedValue {
			todo = append(todo, listed{id: c.GetId(), name: c.GetMetadata().GetName(),
				namespace: c.GetLabels()[cri.LabelPodNamespace], pod: c.GetLabels()[cri.LabelPodName]})
		}
	}

	m.keepPaths(todo)

	jobs := make(chan listed)
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
	)
	for range min(m.policy.MaxWorkers, len(todo)) {
		wg.Go(func() {
			for c := range jobs {
				if err := m.container(ctx, c); err != nil {
					emu.Lock()
					errs = append(errs, err)
					emu.Unlock()
				}
			}
		})
	}
	for _, c := range todo {
		jobs <- c
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}

// listed is what a pass keeps of a running container of its listing.
type listed struct {
	id string
	// namespace and pod are the pod's, name the container's: for logs only.
	namespace, pod, name string
}

// container rotates the log of the running container c if it is large enough.
func (m *Manager) container(ctx context.Context, c listed) error {
	id := c.id
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("logrotate: container %q: %w", id, err)
	}
	path, err := m.logPath(ctx, id)
	if err != nil || path == "" {
		return err
	}
	// The logger with the container's fields, made only when something is
	// logged: most passes log nothing for most containers.
	logger := func() *zap.Logger {
		return m.log.With(zap.String("containerID", id), zap.String("pod", c.namespace+"/"+c.pod),
			zap.String("container", c.name), zap.String("path", path))
	}

	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A reopen failed after the log was renamed (possibly by a kubelet or an actorlet that
		// stopped mid-rotation): the runtime writes to a rotated file. Have it reopen.
		if err := m.rt.ReopenContainerLog(ctx, id); err != nil {
			if cri.KindOf(err) == cri.NotFound {
				// Removed since the listing, its log with it (a pod
				// being deleted): nothing to rotate, nothing wrong.
				return nil
			}
			return fmt.Errorf("logrotate: container %q: log %q missing, reopen failed: %w", id, path, err)
		}
		logger().Info("reopened missing container log")
		info, err = os.Stat(path)
	}
	if err != nil {
		return fmt.Errorf("logrotate: container %q: %w", id, err)
	}
	if info.Size() < m.policy.MaxSize {
		return nil
	}

	r, err := rotate(ctx, m.rt, id, path, info.Size(), m.policy.MaxFiles, m.clock.Now())
	if r.Postponed {
		logger().Debug("container log rotation postponed: rotated file for this second exists")
		return nil
	}
	if m.onRotation != nil {
		m.onRotation(r)
	}
	fields := []zap.Field{zap.Int64("size", r.Size), zap.Int64("maxSize", m.policy.MaxSize),
		zap.Strings("removed", r.Removed), zap.Strings("compressed", r.Compressed)}
	if err != nil {
		// Run (or RotateOnce's caller) reports the error; this records what was done.
		logger().Debug("container log rotation failed", append(fields, zap.Error(err))...)
		return fmt.Errorf("logrotate: container %q: %w", id, err)
	}
	logger().Info("rotated container log", append(fields, zap.String("rotated", r.Rotated))...)
	return nil
}

// logPath is the log path of the running container id: from paths, else
// from its status ("" when it is not running, has no log, or was removed
// since the listing).
func (m *Manager) logPath(ctx context.Context, id string) (string, error) {
	m.pmu.Lock()
	path, ok := m.paths[id]
	m.pmu.Unlock()
	if ok {
		return path, nil
	}
	st, err := m.rt.ContainerStatus(ctx, id)
	if err != nil {
		if cri.KindOf(err) == cri.NotFound {
			return "", nil // removed since the listing
		}
		return "", fmt.Errorf("logrotate: container %q: status: %w", id, err)
	}
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || st.GetLogPath() == "" {
		return "", nil
	}
	m.pmu.Lock()
	if m.paths == nil {
		m.paths = map[string]string{}
	}
	m.paths[id] = st.GetLogPath()
	m.pmu.Unlock()
	return st.GetLogPath(), nil
}

// keepPaths forgets the log paths of containers not in todo, the pass's listing.
func (m *Manager) keepPaths(todo []listed) {
	if len(m.paths) == 0 {
		return
	}
	ids := make(map[string]struct{}, len(todo))
	for _, c := range todo {
		ids[c.id] = struct{}{}
	}
	m.pmu.Lock()
	maps.DeleteFunc(m.paths, func(id, _ string) bool { _, ok := ids[id]; return !ok })
	m.pmu.Unlock()
}
