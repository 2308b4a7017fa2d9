package sim

import (
	"cmp"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// container is one container. Guarded by Runtime.mu; only the fields in
// the second group change after CreateContainer. Its config is kept as
// records (see records.go): what ContainerStatus and ListContainers give
// back is rebuilt from them.
type container struct {
	id          string
	sb          *sandbox
	metaName    string // metadata; with attempt, reserved in the sandbox (String)
	attempt     uint32
	stopSignal  runtimeapi.Signal
	image       string // the config's image spec, unless more.image
	userImage   string // its user-specified image
	imageID     string // "sha256:..." of the resolved image
	labels      pairs
	annotations pairs
	logDir      string // the log path is logDir/logName, if both are set
	logName     string
	mounts      []mount        // unless more.mounts
	more        *containerMore // nil if the config fits the records
	behaviour   *behaviour     // shared, not to be modified
	order       uint64         // creation order, for stable listing

	state      runtimeapi.ContainerState
	exitCode   int32
	createdAt  int64
	startedAt  int64
	finishedAt int64
	reason     string
	message    string
	resources  *resources    // nil if none or more.resources
	served     *probeServer  // listeners while it runs, nil if none
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

// containerName is a container's name as containerd reserves it:
// <name>_<sandbox name>_<attempt>. The runtime reserves the metadata's
// name and attempt within the sandbox (sandbox.containerNamed), and names
// containers so in messages.
func containerName(name string, attempt uint32, sb *sandbox) string {
	return fmt.Sprintf("%s_%s_%d", name, sb, attempt)
}

// String is c's reserved name (containerName), made when asked: for
// messages and logs.
func (c *container) String() string { return containerName(c.metaName, c.attempt, c.sb) }

// setResources records r (nil keeps nothing).
func (c *container) setResources(r *runtimeapi.LinuxContainerResources) {
	res, ok := newResources(r)
	c.resources = res
	if !ok {
		c.moreOf().resources = cloneMsg(r)
	} else if c.more != nil {
		c.more.resources = nil
	}
}

// moreOf is c.more, made if c had none.
func (c *container) moreOf() *containerMore {
	if c.more == nil {
		c.more = &containerMore{}
	}
	return c.more
}

// metadata is c's metadata as given.
func (c *container) metadata() *runtimeapi.ContainerMetadata {
	if c.more != nil && c.more.meta != nil {
		return cloneMsg(c.more.meta)
	}
	return &runtimeapi.ContainerMetadata{Name: c.metaName, Attempt: c.attempt}
}

// imageSpec is c's image spec as given.
func (c *container) imageSpec() *runtimeapi.ImageSpec {
	if c.more != nil && c.more.image != nil {
		return cloneMsg(c.more.image)
	}
	return &runtimeapi.ImageSpec{Image: c.image, UserSpecifiedImage: c.userImage}
}

// mountsCRI are c's mounts as given.
func (c *container) mountsCRI() []*runtimeapi.Mount {
	if c.more != nil && c.more.mounts != nil {
		return cloneMsgs(c.more.mounts)
	}
	if c.mounts == nil {
		return nil
	}
	out := make([]*runtimeapi.Mount, len(c.mounts))
	for i := range c.mounts {
		out[i] = c.mounts[i].toCRI()
	}
	return out
}

// linuxResources are c's resources as last given, nil if none.
func (c *container) linuxResources() *runtimeapi.LinuxContainerResources {
	if c.more != nil && c.more.resources != nil {
		return cloneMsg(c.more.resources)
	}
	if c.resources == nil {
		return nil
	}
	return c.resources.toCRI()
}

// logPath is where c's log is, "" if it has none.
func (c *container) logPath() string {
	if c.logDir == "" || c.logName == "" {
		return ""
	}
	return filepath.Join(c.logDir, c.logName)
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
	r.log.Debug("container exited", zap.String("container", c.id), zap.Stringer("name", c),
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
		Metadata:    c.metadata(),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exitCode,
		ImageRef:    c.imageID,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      c.labels.toMap(),
		Annotations: c.annotations.toMap(),
		Mounts:      c.mountsCRI(),
		LogPath:     c.logPath(),
		ImageId:     c.imageID,
		StopSignal:  c.stopSignal,
	}
	if c.more != nil {
		st.User = cloneMsg(c.more.user)
	}
	if res := c.linuxResources(); res != nil {
		st.Resources = &runtimeapi.ContainerResources{Linux: res}
	}
	if img, ok := r.images.byID[c.imageID]; ok {
		st.Image = &runtimeapi.ImageSpec{Image: img.displayName(), UserSpecifiedImage: c.userImage}
		if c.more != nil && c.more.image != nil {
			st.Image.Annotations = cloneMap(c.more.image.Annotations)
			st.Image.RuntimeHandler = c.more.image.RuntimeHandler
		}
		st.ImageRef = img.repoDigests[0]
	} else {
		st.Image = c.imageSpec()
	}
	return st
}

// toCRI is c's entry in ListContainers.
func (c *container) toCRI() *runtimeapi.Container {
	return &runtimeapi.Container{
		Id:           c.id,
		PodSandboxId: c.sb.id,
		Metadata:     c.metadata(),
		Image:        c.imageSpec(),
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
