package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// KillSpecChanged is the kill reason of a running container whose spec
// changed on the API server (its image): it is stopped and started again
// with the new spec whatever the restartPolicy, at once (a new spec starts
// a new back-off, as the kubelet keys back-off by the container's spec).
const KillSpecChanged = "SpecChanged"

const specChangedKillFormat = "Container %s definition changed, will be restarted"

// update journals PodUpdated when the source's pod differs from the one
// accepted, for a pod that runs (accepted, not going, not finished): the
// API server allows a running pod's activeDeadlineSeconds, container
// images, tolerations, labels and annotations to change, and the node acts
// on the new spec from then on. The running app containers and sidecars
// whose image changed are restarted, as the kubelet restarts a container
// whose spec hash changed. What the API server does not allow to change is
// not checked again here.
//
// stored and digest are storedSpec(pod).
func (d *decider) update(pod *corev1.Pod, stored []byte, digest string) {
	p := d.s.P
	if !d.s.Accepted() || p.Terminating || p.Terminated || p.Removed || p.DeadlineExceeded || finished(d.s, d.now) {
		return
	}
	if digest == p.SpecDigest {
		return
	}
	var restart []string
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		old := d.s.specContainer(c.Name)
		r := p.Containers[c.Name]
		if old == nil || old.Image == c.Image || r == nil || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
			continue
		}
		if d.s.initSpec(c.Name) != nil && !isSidecar(&c) {
			continue // a regular init container runs to completion once
		}
		restart = append(restart, c.Name)
	}
	d.emit(&pb.Event{Kind: &pb.Event_PodUpdated{PodUpdated: &pb.PodUpdated{
		PodJson: stored, SpecDigest: digest, Restart: restart}}})
}

// applyPodUpdated folds PodUpdated: the new spec, and the containers to
// restart marked for a kill.
func applyPodUpdated(s *State, ev *pb.PodUpdated) {
	pod, exact, err := s.decode(ev.PodJson)
	if err != nil {
		return // a corrupt record: the accepted spec stays
	}
	s.setSpecJSON(ev.PodJson, exact)
	s.P.SpecDigest = ev.SpecDigest
	holdAllocation(s, pod)
	s.setSpec(pod)
	for _, name := range ev.Restart {
		r := s.P.Containers[name]
		if r == nil || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING || r.KillReason != "" {
			continue
		}
		r.KillReason, r.KillMessage = KillSpecChanged, fmt.Sprintf(specChangedKillFormat, name)
	}
}
