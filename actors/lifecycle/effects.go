package lifecycle

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Effect is work the core asks the caller to carry out. Effects are data; each
// is idempotent and identified by Key: the caller keeps at most one effect per
// key in flight and reports its outcome with an EffectResult carrying the key.
type Effect interface {
	Key() string
}

// PullImage makes sure the image of a container is present, following the
// pull policy, before the given attempt of the container is created.
type PullImage struct {
	Container string
	Attempt   uint32
	Image     string
	Policy    corev1.PullPolicy
}

// RunSandbox creates the pod's sandbox for the attempt, unless one with that
// attempt already exists, in which case the existing one is the result.
type RunSandbox struct {
	Attempt uint32
}

// CreateContainer creates the container's attempt in the sandbox, unless one
// with that name and attempt already exists.
type CreateContainer struct {
	Name      string
	Attempt   uint32
	SandboxID string
	// RestartCount is the container's restart count, put on the container
	// (cri.AnnotationRestartCount) so that it survives a lost journal.
	RestartCount uint32
	// Target is, for an ephemeral container with a targetContainerName,
	// the runtime ID of that container, whose PID namespace it joins
	// ("": none).
	Target string
}

// StartContainer starts a created container.
type StartContainer struct {
	Name    string
	Attempt uint32
	ID      string
}

// StopContainer stops a container, giving it Grace to exit before it is killed.
// The result carries the container's final state.
type StopContainer struct {
	Name    string
	Attempt uint32
	ID      string
	Grace   time.Duration
}

// RemoveContainer removes an exited container.
type RemoveContainer struct {
	Name string
	ID   string
}

// StopSandbox stops a sandbox (and whatever still runs in it).
type StopSandbox struct {
	ID string
}

// RemoveSandbox removes a stopped sandbox and every container in it.
type RemoveSandbox struct {
	ID string
}

// ArmTimer asks for a Tick at At. A later ArmTimer replaces an earlier one.
type ArmTimer struct {
	At time.Time
}

func (e PullImage) Key() string {
	return "pull/" + e.Container + "/" + strconv.FormatUint(uint64(e.Attempt), 10)
}
func (e RunSandbox) Key() string { return "runsandbox/" + strconv.FormatUint(uint64(e.Attempt), 10) }
func (e CreateContainer) Key() string {
	return "create/" + e.Name + "/" + strconv.FormatUint(uint64(e.Attempt), 10)
}
func (e StartContainer) Key() string  { return "start/" + e.ID }
func (e StopContainer) Key() string   { return "stop/" + e.ID }
func (e RemoveContainer) Key() string { return "rmcontainer/" + e.ID }
func (e StopSandbox) Key() string     { return "stopsandbox/" + e.ID }
func (e RemoveSandbox) Key() string   { return "rmsandbox/" + e.ID }
func (e ArmTimer) Key() string        { return "timer" }

func (e PullImage) String() string {
	return fmt.Sprintf("PullImage %s attempt=%d image=%s policy=%s", e.Container, e.Attempt, e.Image, e.Policy)
}
func (e RunSandbox) String() string { return fmt.Sprintf("RunSandbox attempt=%d", e.Attempt) }
func (e CreateContainer) String() string {
	s := fmt.Sprintf("CreateContainer %s attempt=%d sandbox=%s", e.Name, e.Attempt, e.SandboxID)
	if e.Target != "" {
		s += " target=" + e.Target
	}
	return s
}
func (e StartContainer) String() string {
	return fmt.Sprintf("StartContainer %s attempt=%d id=%s", e.Name, e.Attempt, e.ID)
}
func (e StopContainer) String() string {
	return fmt.Sprintf("StopContainer %s id=%s grace=%s", e.Name, e.ID, e.Grace)
}
func (e RemoveContainer) String() string {
	return fmt.Sprintf("RemoveContainer %s id=%s", e.Name, e.ID)
}
func (e StopSandbox) String() string   { return "StopSandbox id=" + e.ID }
func (e RemoveSandbox) String() string { return "RemoveSandbox id=" + e.ID }
func (e ArmTimer) String() string      { return "ArmTimer at=" + e.At.UTC().Format(time.RFC3339Nano) }
