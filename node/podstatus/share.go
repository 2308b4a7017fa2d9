package podstatus

import (
	corev1 "k8s.io/api/core/v1"
)

// share is one pod's contribution to the gauges. It is computed once when
// the pod is stored and subtracted again when it is replaced or removed, so
// the gauges never need a pass over all pods.
type share struct {
	// counted is false for an orphan (no pod): it contributes nothing.
	counted      bool
	sandboxReady bool
	phase        corev1.PodPhase
	// containers counts the pod's containers by state (uint32: the cache
	// holds a share for every pod; an int's four extra bytes each put its
	// entry in a size class 16 bytes larger).
	containers [numStates]uint32
}

func shareOf(pod *corev1.Pod) share {
	if pod == nil {
		return share{}
	}
	s := share{counted: true, phase: normalPhase(pod.Status.Phase)}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue {
			s.sandboxReady = true
			break
		}
	}
	for _, list := range [][]corev1.ContainerStatus{
		pod.Status.InitContainerStatuses,
		pod.Status.ContainerStatuses,
		pod.Status.EphemeralContainerStatuses,
	} {
		for i := range list {
			if st, ok := stateOf(&list[i]); ok {
				s.containers[st]++
			}
		}
	}
	return s
}

// normalPhase maps an empty or unrecognised phase to Unknown, so the phase
// label has five values at most.
func normalPhase(p corev1.PodPhase) corev1.PodPhase {
	switch p {
	case corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed:
		return p
	default:
		return corev1.PodUnknown
	}
}

// stateOf classifies a container status; ok is false for a container that
// does not exist in the runtime yet (waiting, never created).
func stateOf(cs *corev1.ContainerStatus) (st containerState, ok bool) {
	switch {
	case cs.State.Running != nil:
		return stateRunning, true
	case cs.State.Terminated != nil:
		return stateExited, true
	case cs.State.Waiting != nil && cs.LastTerminationState.Terminated != nil:
		return stateExited, true
	case cs.State.Waiting != nil && cs.ContainerID != "":
		return stateCreated, true
	case cs.State.Waiting != nil:
		return 0, false
	default:
		return stateUnknown, true
	}
}

// started reports whether the pod is Running with every container of its
// spec running (every container with a status when the spec lists none).
func started(pod *corev1.Pod) bool {
	if pod == nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	statuses := pod.Status.ContainerStatuses
	if len(pod.Spec.Containers) == 0 {
		if len(statuses) == 0 {
			return false
		}
		for i := range statuses {
			if statuses[i].State.Running == nil {
				return false
			}
		}
		return true
	}
	for _, c := range pod.Spec.Containers {
		running := false
		for i := range statuses {
			if statuses[i].Name == c.Name {
				running = statuses[i].State.Running != nil
				break
			}
		}
		if !running {
			return false
		}
	}
	return true
}
