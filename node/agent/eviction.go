package agent

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/imagegc"
)

// evictionPods are the pods eviction may choose from: those the node runs
// (not finished). They are copies.
func (a *Agent) evictionPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range a.statuses.List() {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// evict hands an eviction to the pod's actor, which journals it and stops
// the pod (see lifecycle's PodEvicted). It does not wait.
func (a *Agent) evict(_ context.Context, pod *corev1.Pod, reason, message string, grace time.Duration) error {
	a.system.Root.Send(a.sup, &actors.EvictPod{UID: string(pod.UID), Reason: reason, Message: message, Grace: grace})
	return nil
}

// imageReclaimer frees disk for the eviction manager with a pass of the
// image garbage collector.
type imageReclaimer struct{ gc *imagegc.Manager }

func (r imageReclaimer) Reclaim(ctx context.Context, _ eviction.Signal) error {
	_, err := r.gc.GarbageCollect(ctx)
	return err
}
