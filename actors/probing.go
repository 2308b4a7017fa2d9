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
	// each thresholded result that changed, and observe (when not nil)
	// with the outcome of every probe run, before any threshold; neither
	// blocks.
	ForPod(pod *corev1.Pod, report func(*pb.ProbeResult), observe func(Probed)) PodProber
}

// ProbeOutcome is what one probe run found.
type ProbeOutcome int

const (
	// ProbeSucceeded: the container passed.
	ProbeSucceeded ProbeOutcome = iota
	// ProbeWarned: passed, with a warning (an HTTP redirect to another
	// host, as the kubelet's probe.Warning).
	ProbeWarned
	// ProbeFailed: the container failed the probe.
	ProbeFailed
	// ProbeErrored: the probe could not be carried out (its result is
	// thrown away, as the kubelet's).
	ProbeErrored
)

// Probed is one probe run of a container.
type Probed struct {
	Container, ContainerID string
	Kind                   pb.ProbeKind
	Outcome                ProbeOutcome
	// Message is the probe's output or error.
	Message string
}

// ProbeSink is an optional extension of an EventSink: it is told of every
// probe run of a pod's running containers, for the kubelet's Unhealthy and
// ProbeWarning events, which the kubelet's prober records for each failed
// run (client-go's recorder aggregates the repeats). Nothing is journaled
// for a single run (the PodActor journals only thresholded changes), so the
// journal does not grow per probe period, and a run is not replayed. Called
// from the probe workers' goroutines, possibly concurrently; it must not
// block.
type ProbeSink interface {
	Probed(pod *corev1.Pod, p Probed)
}

// Probed implements ProbeSink for the sinks that implement it.
func (s EventSinks) Probed(pod *corev1.Pod, p Probed) {
	for _, sink := range s {
		if ps, ok := sink.(ProbeSink); ok {
			ps.Probed(pod, p)
		}
	}
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
	if a.deps.Probers == nil || a.state() == nil || a.state().Pod == nil {
		return
	}
	targets := lifecycle.ProbeTargets(a.state())
	if a.prober == nil {
		if len(targets) == 0 {
			return
		}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		var observe func(Probed)
		if sink, ok := a.deps.Events.(ProbeSink); ok {
			pod := a.state().Pod
			observe = func(p Probed) { sink.Probed(pod, p) }
		}
		a.prober = a.deps.Probers.ForPod(a.state().Pod, func(r *pb.ProbeResult) { root.Send(self, r) }, observe)
	}
	a.prober.Sync(a.ctx, a.podIP(), targets)
}

func (a *podActor) stopProbes() {
	if a.prober != nil {
		a.prober.Stop()
		a.prober = nil
	}
}
