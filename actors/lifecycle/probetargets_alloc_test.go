package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// ProbeTargets runs at every sync of a pod: for a pod without probes it
// allocates nothing.
func TestProbeTargetsNoProbesNoAllocation(t *testing.T) {
	s := NewState("u1")
	s.Pod = &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "app"}, {Name: "side"}},
	}}
	s.P.Containers["app"] = &pb.ContainerRecord{Phase: pb.ContainerPhase_CONTAINER_RUNNING, Id: "c1"}
	if n := testing.AllocsPerRun(100, func() { _ = ProbeTargets(s) }); n != 0 {
		t.Errorf("ProbeTargets allocated %v times per call, want 0", n)
	}
}
