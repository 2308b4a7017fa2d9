package sim

import (
	"cmp"
	"fmt"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// container is one container. Guarded by Runtime.mu; only the fields in
// the second group change after CreateContainer.
type container struct {
	id          string
	sb          *sandbox
	name        string // reserved name, derived from metadata and sandbox
	meta        *runtimeapi.ContainerMetadata
	image       *runtimeapi.ImageSpec // as given in the config
	imageID     string                // "sha256:..." of the resolved image
	labels      pairs
	annotations pairs
	logPath     string
	mounts      []*runtimeapi.Mount
	user        *runtimeapi.ContainerUser
	stopSignal  runtimeapi.Signal
	behaviour   behaviour
	order       uint64 // creation order, for stable listing

	state      runtimeapi.ContainerState
	createdAt  int64
	startedAt  int64
	finishedAt int64
	exitCode   int32
	reason     string
	message    string
	resources  *runtimeapi.LinuxContainerResources
	timer      timer         // pending exit, nil if none
	pending    *exitPlan     // what timer will do
	seq        uint64        // bumped whenever the pending exit changes
	exited     chan struct{} // made by StopContainer waiters, closed on exit
}

// exitPlan is a scheduled exit of a running container.
type exitPlan struct {
	at      int64 // Unix nanoseconds; becomes finishedAt
	code    int32
	reason  string
	message string
}

// containerName is reserved per container, like containerd's
// <name>_<sandbox name>_<attempt>.
func containerName(m *runtimeapi.ContainerMetadata, sb *sandbox) string {
	return fmt.Sprintf("%s_%s_%d", m.GetName(), sb.name, m.GetAttempt())
}

func compareContainers(a, b *container) int {
	return cmp.Compare(a.order, b.order)
}

// cancelTimer drops any pending exit.
func (c *container) cancelTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.pending = nil
	c.seq++
}

// scheduleExitLocked arranges for c to exit at the given time, unless an
// earlier exit is already pending. at must be in the future.
func (r *Runtime) scheduleExitLocked(c *container, p exitPlan) {
	if c.pending != nil && c.pending.at <= p.at {
		return
	}
	c.cancelTimer()
	seq := c.seq
	c.pending = &p
	d := max(time.Duration(p.at-r.now()), 0)
	// The callback must not take r.mu synchronously: FakeClock runs it
	// with its own lock held, while RPCs take the clock's lock under r.mu.
	c.timer = r.afterFunc(d, func() {
		if r.opts.SyncTimers {
			r.fireExit(c, seq)
			return
		}
		go r.fireExit(c, seq)
	})
}

// fireExit carries out a pending exit unless it was superseded.
func (r *Runtime) fireExit(c *container, seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || c.seq != seq || c.pending == nil || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	p := *c.pending
	r.exitLocked(c, p)
}

// exitLocked makes a running container EXITED and emits
// CONTAINER_STOPPED_EVENT.
func (r *Runtime) exitLocked(c *container, p exitPlan) {
	c.cancelTimer()
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt, c.exitCode, c.reason, c.message = p.at, p.code, p.reason, p.message
	r.running--
	if c.exited != nil {
		close(c.exited)
	}
	r.log.Debug("container exited", zap.String("container", c.id), zap.String("name", c.name),
		zap.Int32("exitCode", p.code), zap.String("reason", p.reason))
	r.emitLocked(c.id, c.sb, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// killPlan is the exit of a SIGKILLed process at time at.
func killPlan(at int64, why string) exitPlan {
	return exitPlan{at: at, code: exitCodeKilled, reason: reasonError, message: why}
}

// containerStatusLocked is c's full CRI status. The image is reported as
// containerd does: its tag and repo digest while the image is present,
// else the spec and ID the container was created with.
func (r *Runtime) containerStatusLocked(c *container) *runtimeapi.ContainerStatus {
	st := &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    cloneMsg(c.meta),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exitCode,
		Image:       cloneMsg(c.image),
		ImageRef:    c.imageID,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      c.labels.toMap(),
		Annotations: c.annotations.toMap(),
		Mounts:      cloneMsgs(c.mounts),
		LogPath:     c.logPath,
		ImageId:     c.imageID,
		User:        cloneMsg(c.user),
		StopSignal:  c.stopSignal,
	}
	if c.resources != nil {
		st.Resources = &runtimeapi.ContainerResources{Linux: cloneMsg(c.resources)}
	}
	if img, ok := r.images.byID[c.imageID]; ok {
		st.Image = &runtimeapi.ImageSpec{
			Image:              img.displayName(),
			Annotations:        cloneMap(c.image.GetAnnotations()),
			UserSpecifiedImage: c.image.GetUserSpecifiedImage(),
			RuntimeHandler:     c.image.GetRuntimeHandler(),
		}
		st.ImageRef = img.repoDigests[0]
	}
	return st
}

// toCRI is c's entry in ListContainers.
func (c *container) toCRI() *runtimeapi.Container {
	return &runtimeapi.Container{
		Id:           c.id,
		PodSandboxId: c.sb.id,
		Metadata:     cloneMsg(c.meta),
		Image:        cloneMsg(c.image),
		ImageRef:     c.imageID,
		State:        c.state,
		CreatedAt:    c.createdAt,
		Labels:       c.labels.toMap(),
		Annotations:  c.annotations.toMap(),
		ImageId:      c.imageID,
	}
}

// matches applies a ContainerFilter: all set fields, ANDed.
func (c *container) matches(f *runtimeapi.ContainerFilter) bool {
	if f == nil {
		return true
	}
	if f.Id != "" && f.Id != c.id {
		return false
	}
	if f.State != nil && f.State.State != c.state {
		return false
	}
	if f.PodSandboxId != "" && f.PodSandboxId != c.sb.id {
		return false
	}
	return c.labels.matches(f.LabelSelector)
}
