package lifecycle

import (
	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Init containers run before the app containers, in order, as the
// kubelet runs them:
//   - a regular init container runs to completion (exit 0) before the next
//     one starts; a failure is retried with back-off unless the pod's
//     restartPolicy is Never, which fails the pod;
//   - a sidecar (an init container with restartPolicy Always) is started,
//     and the next init container waits until it has started (its startup
//     probe passed, if it has one); it keeps running, is restarted whenever
//     it exits, and is stopped after the app containers when the pod
//     terminates;
//   - once every init container is done, PodInitialized is journaled with
//     the sandbox's ID and the app containers start. A sidecar restarting
//     later does not hold them back.
//
// A new sandbox (the old one was lost) runs the regular init containers
// again.

// isSidecar reports whether an init container is a sidecar.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// initSpec returns the spec of the named init container, or nil.
func (s *State) initSpec(name string) *corev1.Container {
	if s.Pod == nil {
		return nil
	}
	for i := range s.Pod.Spec.InitContainers {
		if s.Pod.Spec.InitContainers[i].Name == name {
			return &s.Pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// sidecarStarted: running and past its startup probe.
func sidecarStarted(c *corev1.Container, r *pb.ContainerRecord) bool {
	return r != nil && r.Phase == pb.ContainerPhase_CONTAINER_RUNNING && r.KillReason == "" &&
		(c.StartupProbe == nil || r.StartupDone)
}

// initCompleted reports whether a regular init container completed.
func initCompleted(r *pb.ContainerRecord) bool {
	return r != nil && r.Phase == pb.ContainerPhase_CONTAINER_EXITED && r.ExitCode == 0
}

// Initialized reports whether the pod's init containers are done in its
// current sandbox (a pod without any always is).
func Initialized(s *State) bool {
	if s.Pod == nil || len(s.Pod.Spec.InitContainers) == 0 {
		return true
	}
	return s.P.InitializedSandbox != "" && s.P.Sandbox != nil && s.P.InitializedSandbox == s.P.Sandbox.Id
}

// initFailed reports whether a regular init container failed and will not
// be restarted: the pod has failed.
func initFailed(s *State) bool {
	if s.Pod == nil || Initialized(s) {
		return false
	}
	for i := range s.Pod.Spec.InitContainers {
		c := &s.Pod.Spec.InitContainers[i]
		r := s.P.Containers[c.Name]
		if !isSidecar(c) && r != nil && r.Phase == pb.ContainerPhase_CONTAINER_EXITED && r.ExitCode != 0 && !restartWanted(s, r) {
			return true
		}
	}
	return false
}

// planInit drives the init sequence and reports whether the app
// containers may run. Sidecars keep being planned (restarted when they
// exit) once the sequence is done.
func (d *decider) planInit(fx *effects, sb *pb.SandboxRecord) bool {
	done := Initialized(d.s)
	for i := range d.s.Pod.Spec.InitContainers {
		c := &d.s.Pod.Spec.InitContainers[i]
		switch {
		case isSidecar(c):
			d.planContainer(fx, c, sb)
			if !done && !sidecarStarted(c, d.s.P.Containers[c.Name]) {
				return false
			}
		case done || initCompleted(d.s.P.Containers[c.Name]):
		default:
			d.planContainer(fx, c, sb)
			return false
		}
	}
	if !done {
		d.emit(&pb.Event{Kind: &pb.Event_PodInitialized{PodInitialized: &pb.PodInitialized{SandboxId: sb.Id}}})
	}
	return true
}

// rerunInit resets the regular init containers that completed, so that a
// new sandbox runs them again (Apply of SandboxCreated).
func rerunInit(s *State) {
	if s.Pod == nil {
		return
	}
	for i := range s.Pod.Spec.InitContainers {
		c := &s.Pod.Spec.InitContainers[i]
		if r := s.P.Containers[c.Name]; r != nil && !isSidecar(c) && initCompleted(r) {
			r.Phase = pb.ContainerPhase_CONTAINER_NONE
			r.Id = ""
		}
	}
}

// sidecarNames are the names of the pod's sidecars.
func sidecarNames(s *State) map[string]bool {
	out := map[string]bool{}
	if s.Pod == nil {
		return out
	}
	for i := range s.Pod.Spec.InitContainers {
		if isSidecar(&s.Pod.Spec.InitContainers[i]) {
			out[s.Pod.Spec.InitContainers[i].Name] = true
		}
	}
	return out
}
