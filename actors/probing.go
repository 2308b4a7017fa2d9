package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Probers run the startup, liveness and readiness probes of pods
// (node/probe implements it).
type Probers interface {
	// ForPod returns the prober of one pod. Its workers call report with
	// each thresholded result that changed; report never blocks.
	ForPod(pod *corev1.Pod, report func(*pb.ProbeResult)) PodProber
}

// PodProber runs the probe workers of one pod's containers.
type PodProber interface {
	// Sync runs workers for exactly the targets given (see
	// lifecycle.ProbeTargets) and stops the others. It does not block.
	Sync(ctx context.Context, podIP string, targets []lifecycle.ProbeTarget)
	// Stop stops every worker.
	Stop()
}

// Hooks run containers' lifecycle hooks (node/probe implements it).
type Hooks interface {
	// Hook runs h (exec, httpGet or sleep) for the container. The error's
	// message becomes the FailedPostStartHook or FailedPreStopHook event.
	Hook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID, podIP string, h *corev1.LifecycleHandler) error
}

// syncProbes starts or stops the pod's probe workers after each decision:
// probes run for the containers lifecycle.ProbeTargets names.
func (a *podActor) syncProbes(ctx actor.Context) {
	if a.deps.Probers == nil || a.state == nil || a.state.Pod == nil {
		return
	}
	targets := lifecycle.ProbeTargets(a.state)
	if a.prober == nil {
		if len(targets) == 0 {
			return
		}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		a.prober = a.deps.Probers.ForPod(a.state.Pod, func(r *pb.ProbeResult) { root.Send(self, r) })
	}
	a.prober.Sync(context.Background(), a.podIP(), targets)
}

func (a *podActor) stopProbes() {
	if a.prober != nil {
		a.prober.Stop()
		a.prober = nil
	}
}
