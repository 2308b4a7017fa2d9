package actors

import (
	"maps"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// judgeResize puts into msg, the wish of a pod the node may hold, the node
// admission's verdict on its resize (see admission.resize); the PodActor's
// core allocates the resize or defers it by that verdict.
func (s *supervisor) judgeResize(msg *pb.PodDesired, pod *corev1.Pod) {
	msg.ResizeJudged, msg.ResizeReason, msg.ResizeMessage = s.admitted.resize(pod)
}

// retryResizes judges again each resize the node deferred, once a pod gave
// back what it held (the kubelet's RetryPendingResizes), and sends the
// verdicts to their PodActors. The pods are judged in the order of their
// UIDs (the kubelet orders them by priority, QoS class and age).
func (s *supervisor) retryResizes(ctx actor.Context) {
	for _, uid := range slices.Sorted(maps.Keys(s.pods)) {
		if s.respawn.waiting[uid] {
			continue // its next actor asks for the latest wish
		}
		name, d, ok := s.wish(uid)
		if !ok || !s.admitted.pendingResize(d.pod) {
			continue
		}
		msg, _ := desiredMsg(d.pod, name)
		s.judgeResize(msg, d.pod)
		ctx.Send(s.pods[uid], msg)
	}
}
