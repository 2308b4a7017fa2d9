package sim

import (
	"cmp"
	"fmt"
	"path/filepath"
	"time"
	"unique"

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
	metaName    unique.Handle[string] // metadata; with attempt, reserved in the sandbox (String)
	attempt     uint32
	stopSignal  runtimeapi.Signal
	image       unique.Handle[imageRecord]
	labels      pairs
	annotations pairs
	logName     unique.Handle[string] // the log path is <log directory>/logName (logPath)
	mounts      []mount               // unless more.mounts
	more        *containerMore        // nil if the config fits the records
	behaviour   *behaviour            // shared, not to be modified
	order       uint64                // creation order, for stable listing

	state      runtimeapi.ContainerState
	exitCode   int32
	createdAt  int64
	startedAt  int64
	finishedAt int64
	reason     string
	message    string
	resources  unique.Handle[resources] // noResources if none or more.resources
	pending    *pendingExit             // nil if none
	waits      *containerWaits          // nil until something waits for the exit
}

// pendingExit is a scheduled exit of a running container. A new one is
// made for each schedule, so that a timer finding another one, or none,
// in its container knows it was superseded.
type pendingExit struct {
	exitPlan
	timer timer
}

// containerWaits are what waits for a running container's exit, made
// when the first comes: the channel closed at the exit (StopContainer
// waits on it), and the listeners of its probe ports (probeserve.go),
// closed when it exits.
type containerWaits struct {
	exited chan struct{}
	served *probeServer // nil if none
}

// exitedChan is the channel closed when c exits, made if it had none.
func (c *container) exitedChan() chan struct{} {
	if c.waits == nil {
		c.waits = &containerWaits{}
	}
	if c.waits.exited == nil {
		c.waits.exited = make(chan struct{})
	}
	return c.waits.exited
}

// served is c's probe server, nil if none.
func (c *container) served() *probeServer {
	if c.waits == nil {
		return nil
	}
	return c.waits.served
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
func (c *container) String() string { return containerName(c.metaName.Value(), c.attempt, c.sb) }

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
	return &runtimeapi.ContainerMetadata{Name: c.metaName.Value(), Attempt: c.attempt}
}

// imageSpec is c's image spec as given.
func (c *container) imageSpec() *runtimeapi.ImageSpec {
	if c.more != nil && c.more.image != nil {
		return cloneMsg(c.more.image)
	}
	rec := c.image.Value()
	return &runtimeapi.ImageSpec{Image: rec.image, UserSpecifiedImage: rec.userSpecified}
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
	if c.resources == noResources {
		return nil
	}
	return c.resources.Value().toCRI()
}

// logPath is where c's log is, "" if it has none: in the log directory
// of CreateContainer's sandbox config, else of its sandbox's.
func (c *container) logPath() string {
	dir := c.sb.logDir
	if c.more != nil && c.more.logDir != "" {
		dir = c.more.logDir
	}
	name := c.logName.Value()
	if dir == "" || name == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

func compareContainers(a, b *container) int {
	return cmp.Compare(a.order, b.order)
}

// cancelTimer drops any pending exit.
func (c *container) cancelTimer() {
	if c.pending != nil && c.pending.timer != nil {
		c.pending.timer.Stop()
	}
	c.pending = nil
}

// scheduleExitLocked arranges for c to exit at the given time, unless an
// earlier exit is already pending. at must be in the future.
func (r *Runtime) scheduleExitLocked(c *container, p exitPlan) {
	if c.pending != nil && c.pending.at <= p.at {
		return
	}
	c.cancelTimer()
	pe := &pendingExit{exitPlan: p}
	c.pending = pe
	d := max(time.Duration(p.at-r.now()), 0)
	// The callback must not take r.mu synchronously: FakeClock runs it
	// with its own lock held, while RPCs take the clock's lock under r.mu.
	pe.timer = r.afterFunc(d, func() {
		if r.opts.SyncTimers {
			r.fireExit(c, pe)
			return
		}
		go r.fireExit(c, pe)
	})
}

// fireExit carries out the pending exit pe unless it was superseded.
func (r *Runtime) fireExit(c *container, pe *pendingExit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || c.pending != pe || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	r.exitLocked(c, pe.exitPlan)
}

// exitLocked makes a running container EXITED and emits
// CONTAINER_STOPPED_EVENT.
func (r *Runtime) exitLocked(c *container, p exitPlan) {
	c.cancelTimer()
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt, c.exitCode, c.reason, c.message = p.at, p.code, p.reason, p.message
	r.running--
	if c.waits != nil && c.waits.exited != nil {
		close(c.waits.exited)
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
	rec := c.image.Value()
	st := &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    c.metadata(),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exitCode,
		ImageRef:    rec.img.id,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      c.labels.toMap(),
		Annotations: c.annotations.toMap(),
		Mounts:      c.mountsCRI(),
		LogPath:     c.logPath(),
		ImageId:     rec.img.id,
		StopSignal:  c.stopSignal,
	}
	if c.more != nil {
		st.User = cloneMsg(c.more.user)
	}
	if res := c.linuxResources(); res != nil {
		st.Resources = &runtimeapi.ContainerResources{Linux: res}
	}
	if img, ok := r.images.byID[rec.img.id]; ok {
		st.Image = &runtimeapi.ImageSpec{Image: img.displayName(), UserSpecifiedImage: rec.userSpecified}
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
	id := c.image.Value().img.id
	return &runtimeapi.Container{
		Id:           c.id,
		PodSandboxId: c.sb.id,
		Metadata:     c.metadata(),
		Image:        c.imageSpec(),
		ImageRef:     id,
		State:        c.state,
		CreatedAt:    c.createdAt,
		Labels:       c.labels.toMap(),
		Annotations:  c.annotations.toMap(),
		ImageId:      id,
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
