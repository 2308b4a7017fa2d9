package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Ephemeral containers (spec.ephemeralContainers), as the kubelet runs
// them:
//   - they come with a spec update of a running pod (the API server adds
//     them through the pods/ephemeralcontainers subresource), journaled
//     as any PodUpdated: nothing else of the pod restarts;
//   - each is created and started once, in the pod's current sandbox, as
//     soon as that sandbox is ready, whether or not the init containers
//     are done; a failed pull or create (no container made) is tried
//     again after the back-off, but once a container of it was created it
//     is never created or started again: not when it exits, not when its
//     start failed, not in a new sandbox;
//   - with targetContainerName, it is created in that container's PID
//     namespace (CreateContainer.Target, the target's current container
//     ID; it waits until the target has one);
//   - it has no probes, ports, lifecycle hooks or resources (the API
//     refuses them), counts for neither the pod's phase nor its readiness,
//     and is stopped with the other containers when the pod terminates;
//   - its status is in status.ephemeralContainerStatuses.
//
// Its record is an ordinary ContainerRecord (container names are unique
// across containers, init containers and ephemeral containers), so its
// intents, adoption after a crash and stray detection are the other
// containers'.

// ephemeralSpec returns the named ephemeral container, or nil.
func (s *State) ephemeralSpec(name string) *corev1.EphemeralContainer {
	if s.Pod == nil {
		return nil
	}
	for i := range s.Pod.Spec.EphemeralContainers {
		if s.Pod.Spec.EphemeralContainers[i].Name == name {
			return &s.Pod.Spec.EphemeralContainers[i]
		}
	}
	return nil
}

// asContainer is an ephemeral container as a Container (the same fields,
// as the kubelet converts it).
func asContainer(ec *corev1.EphemeralContainer) *corev1.Container {
	return (*corev1.Container)(&ec.EphemeralContainerCommon)
}

// everCreated reports whether a container of the record was ever created:
// an ephemeral container is then never created again.
func everCreated(r *pb.ContainerRecord) bool {
	return r.Id != "" || len(r.DeadIds) > 0 || r.LastTermination != nil || r.CreatedAtUnixNano != 0
}

// planEphemeral drives the pod's ephemeral containers in its ready sandbox
// sb.
func (d *decider) planEphemeral(fx *effects, sb *pb.SandboxRecord) {
	for i := range d.s.Pod.Spec.EphemeralContainers {
		d.planEphemeralContainer(fx, &d.s.Pod.Spec.EphemeralContainers[i], sb)
	}
}

func (d *decider) planEphemeralContainer(fx *effects, ec *corev1.EphemeralContainer, sb *pb.SandboxRecord) {
	r := d.s.P.Containers[ec.Name]
	if r == nil {
		r = &pb.ContainerRecord{Name: ec.Name}
	}
	switch r.Phase {
	case pb.ContainerPhase_CONTAINER_REQUESTED:
		target, ok := d.ephemeralTarget(ec)
		if !ok {
			return
		}
		fx.add(CreateContainer{Name: r.Name, Attempt: r.Attempt, SandboxID: sb.Id, RestartCount: r.RestartCount, Target: target})
		return
	case pb.ContainerPhase_CONTAINER_CREATED:
		fx.add(StartContainer{Name: r.Name, Attempt: r.Attempt, ID: r.Id})
		return
	case pb.ContainerPhase_CONTAINER_RUNNING:
		if r.KillReason != "" {
			d.stop(fx, r, d.graceOf(d.s.Pod), r.KillReason)
		} else {
			d.hookGate(fx, StageAfterStart, r.Name, r.Attempt, time.Time{})
		}
		return
	case pb.ContainerPhase_CONTAINER_EXITED:
		return // never restarted
	}
	if everCreated(r) {
		return // its start failed, or it was lost: never again
	}
	// Not created yet (NONE, or a failed pull or create): once any
	// back-off has passed, its target has a container and its image is there.
	if until := time.Unix(0, r.BackoffUntilUnixNano); r.BackoffUntilUnixNano != 0 && until.After(d.now) {
		fx.wakeAt(until)
		return
	}
	if _, ok := d.ephemeralTarget(ec); !ok {
		return
	}
	d.requestNextAttempt(fx, r, ec.Image, ec.ImagePullPolicy)
}

// ephemeralTarget is the current container ID of ec's targetContainerName
// ("" without one), and whether it is known: the kubelet's target is that
// container's newest instance, which must exist.
func (d *decider) ephemeralTarget(ec *corev1.EphemeralContainer) (string, bool) {
	if ec.TargetContainerName == "" {
		return "", true
	}
	t := d.s.P.Containers[ec.TargetContainerName]
	if t == nil || t.Id == "" {
		return "", false
	}
	return t.Id, true
}

// ephemeralStatuses are the pod's status.ephemeralContainerStatuses: as a
// container's status, never ready (the kubelet's readiness covers the app
// and init containers alone), without resources.
func ephemeralStatuses(s *State, env StatusEnv) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for i := range s.Pod.Spec.EphemeralContainers {
		cs := containerStatus(s, asContainer(&s.Pod.Spec.EphemeralContainers[i]), env)
		cs.Ready = false
		cs.AllocatedResources, cs.Resources = nil, nil
		out = append(out, cs)
	}
	return out
}
