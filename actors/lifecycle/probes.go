package lifecycle

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Kill reasons of a running container (ContainerRecord.KillReason): it is
// stopped and then restarted as its pod's restartPolicy says.
const (
	KillLivenessProbe   = "LivenessProbeFailed"
	KillStartupProbe    = "StartupProbeFailed"
	KillPostStartHook   = "FailedPostStartHook"
	HookPostStart       = "PostStart"
	HookPreStop         = "PreStop"
	probeKillFormat     = "Container %s failed %s probe, will be restarted"
	postStartKillFormat = "Container %s failed its PostStart hook: %s"
)

// ProbeTarget is a running container whose probes should run: startup
// until StartupDone, then liveness and readiness.
type ProbeTarget struct {
	Name        string
	ContainerID string
	StartupDone bool
	// StartedAt is when the container started (initialDelaySeconds counts
	// from it).
	StartedAt time.Time
}

// ProbeTargets lists the containers of s whose probes should run now:
// running, not being killed, the pod not terminating. The caller runs
// probe workers for exactly these (a container ID not listed any more
// stops its workers).
func ProbeTargets(s *State) []ProbeTarget {
	if s.Pod == nil || s.P.Terminating || s.P.DeadlineExceeded || s.P.Removed {
		return nil
	}
	var out []ProbeTarget
	// By index: a sync of a pod without probes allocates nothing (a
	// corev1.Container is over a kilobyte).
	spec := &s.Pod.Spec
	for i := range len(spec.InitContainers) + len(spec.Containers) {
		var c *corev1.Container
		if i < len(spec.InitContainers) {
			c = &spec.InitContainers[i]
		} else {
			c = &spec.Containers[i-len(spec.InitContainers)]
		}
		if s.initSpec(c.Name) != nil && !isSidecar(c) {
			continue // regular init containers have no probes
		}
		if c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil {
			continue
		}
		r := s.P.Containers[c.Name]
		if r == nil || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING || r.KillReason != "" {
			continue
		}
		out = append(out, ProbeTarget{Name: c.Name, ContainerID: r.Id, StartupDone: r.StartupDone || c.StartupProbe == nil,
			StartedAt: time.Unix(0, r.StartedAtUnixNano)})
	}
	return out
}

// probe folds a probe worker's result: only what changes the container's
// record is journaled.
func (d *decider) probe(in *pb.ProbeResult) {
	r := d.s.P.Containers[in.GetName()]
	if r == nil || r.Id == "" || r.Id != in.GetContainerId() || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING ||
		r.KillReason != "" || d.s.P.Terminating {
		return
	}
	changed := false
	switch in.GetKind() {
	case pb.ProbeKind_PROBE_READINESS:
		changed = r.Ready != in.GetSuccess()
	case pb.ProbeKind_PROBE_STARTUP:
		changed = !r.StartupDone // a success lets the others begin; a failure kills
	case pb.ProbeKind_PROBE_LIVENESS:
		changed = !in.GetSuccess()
	}
	if !changed {
		return
	}
	d.emit(&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{
		Name: r.Name, ContainerId: r.Id, Kind: in.GetKind(), Success: in.GetSuccess(), Message: in.GetMessage()}}})
}

// applyProbe folds ProbeChanged into the container's record.
func applyProbe(s *State, ev *pb.ProbeChanged) {
	r := s.P.Containers[ev.Name]
	if r == nil || r.Id != ev.ContainerId || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
		return
	}
	switch ev.Kind {
	case pb.ProbeKind_PROBE_READINESS:
		r.Ready = ev.Success
	case pb.ProbeKind_PROBE_STARTUP:
		if ev.Success {
			r.StartupDone = true
		} else if r.KillReason == "" {
			r.KillReason, r.KillMessage = KillStartupProbe, fmt.Sprintf(probeKillFormat, r.Name, "startup")
			r.Ready = false
		}
	case pb.ProbeKind_PROBE_LIVENESS:
		if !ev.Success && r.KillReason == "" {
			r.KillReason, r.KillMessage = KillLivenessProbe, fmt.Sprintf(probeKillFormat, r.Name, "liveness")
			r.Ready = false
		}
	}
}

// applyHookFailed folds HookFailed: a failed PostStart has the container
// killed; a failed PreStop changes nothing (the stop goes on).
func applyHookFailed(s *State, ev *pb.HookFailed) {
	r := s.P.Containers[ev.Name]
	if r == nil || r.Id != ev.ContainerId || ev.Hook != HookPostStart || r.KillReason != "" {
		return
	}
	if r.Phase == pb.ContainerPhase_CONTAINER_RUNNING || r.Phase == pb.ContainerPhase_CONTAINER_CREATED {
		r.KillReason, r.KillMessage = KillPostStartHook, fmt.Sprintf(postStartKillFormat, r.Name, ev.Message)
		r.Ready = false
	}
}

// hookFailed journals a failed hook of the container with that ID.
func (d *decider) hookFailed(r *pb.ContainerRecord, hook, msg string) {
	d.emit(&pb.Event{Kind: &pb.Event_HookFailed{HookFailed: &pb.HookFailed{
		Name: r.Name, ContainerId: r.Id, Hook: hook, Message: msg}}})
}

// killGrace is the grace period of a container killed for kill reason:
// the failing probe's terminationGracePeriodSeconds when it sets one, else
// the pod's.
func (d *decider) killGrace(spec *corev1.Container, reason string) time.Duration {
	var p *corev1.Probe
	switch reason {
	case KillLivenessProbe:
		p = spec.LivenessProbe
	case KillStartupProbe:
		p = spec.StartupProbe
	}
	if p != nil && p.TerminationGracePeriodSeconds != nil {
		return time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
	}
	return d.graceOf(d.s.Pod)
}

// containerReady is the kubelet's ready flag of a running container:
// started (its startup probe passed, or it has none), its readiness probe
// passed (or it has none), and not being killed.
func containerReady(spec *corev1.Container, r *pb.ContainerRecord) (ready, started bool) {
	started = spec.StartupProbe == nil || r.StartupDone
	ready = started && r.KillReason == "" && (spec.ReadinessProbe == nil || r.Ready)
	return ready, started
}
