package actors

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// RunEffect carries out one effect of the pod uid the way a ContainerActor
// does (the same code: lookups of earlier attempts, CRI calls, hooks and
// the result's fields), synchronously, in the caller's goroutine. fresh is
// a creation's first try journaled by the caller's current incarnation, for
// which nothing is looked up first (see podActor.fresh). It is for drivers
// other than the actors, such as the deterministic simulation (package
// sim), which plays the PodActor's part itself.
//
// The result carries the outcome for lifecycle Decide; err is non-nil when
// the effect failed (cri.Retryable tells a transient failure).
func RunEffect(ctx context.Context, deps *Deps, uid string, e lifecycle.Effect, pod *corev1.Pod, podIP string, fresh bool) (*pb.EffectResult, error) {
	deps.withDefaults()
	a := &containerActor{ctx: ctx, uid: uid, deps: deps}
	return a.run(ctx, &runEffect{effect: e, pod: pod, podIP: podIP, fresh: fresh})
}
