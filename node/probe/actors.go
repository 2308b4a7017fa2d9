package probe

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// ForActors runs the probes and hooks of actorlet's PodActors and
// ContainerActors with a Runner: it implements actors.Probers and
// actors.Hooks.
type ForActors struct {
	Runner *Runner
	// Prober runs the probes (nil: Runner); hooks always go to Runner.
	Prober Prober
	// Clock schedules the probe workers (nil: the real clock).
	Clock clock.Clock
}

var (
	_ actors.Probers = ForActors{}
	_ actors.Hooks   = ForActors{}
)

// ForPod implements actors.Probers. Unknown results (the runtime could not
// run an exec probe) are not reported: they change nothing, as in the
// kubelet. observe, when not nil, is given every probe run of a worker
// still running (Unknown as actors.ProbeErrored).
func (f ForActors) ForPod(pod *corev1.Pod, report func(*pb.ProbeResult), observe func(actors.Probed)) actors.PodProber {
	var p Prober = f.Runner
	if f.Prober != nil {
		p = f.Prober
	}
	if observe != nil {
		p = observed{Prober: p, observe: observe}
	}
	m := NewManager(pod, p, f.Clock, func(r Report) {
		if r.Result == Unknown {
			return
		}
		report(&pb.ProbeResult{Name: r.Container, ContainerId: r.ContainerID, Kind: kindPB(r.Kind),
			Success: r.Result == Success, Message: r.Message})
	})
	return podProber{m: m, pod: pod}
}

// Hook implements actors.Hooks.
func (f ForActors) Hook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID, podIP string, h *corev1.LifecycleHandler) error {
	_, err := f.Runner.Hook(ctx, Target{Pod: pod, Container: c, ContainerID: containerID, PodIP: podIP}, h)
	return err
}

type podProber struct {
	m   *Manager
	pod *corev1.Pod
}

func (p podProber) Sync(ctx context.Context, podIP string, targets []lifecycle.ProbeTarget) {
	running := make([]Running, 0, len(targets))
	for _, t := range targets {
		c := container(p.pod, t.Name)
		if c == nil {
			continue
		}
		running = append(running, Running{Name: t.Name, ID: t.ContainerID, Container: c, StartupDone: t.StartupDone, StartedAt: t.StartedAt})
	}
	p.m.Sync(ctx, podIP, running)
}

func (p podProber) Stop() { p.m.Stop() }

// container is the pod's app or init container name, or nil.
func container(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func kindPB(k Kind) pb.ProbeKind {
	switch k {
	case Startup:
		return pb.ProbeKind_PROBE_STARTUP
	case Liveness:
		return pb.ProbeKind_PROBE_LIVENESS
	default:
		return pb.ProbeKind_PROBE_READINESS
	}
}

// observed hands every probe run to observe, except one whose worker was
// stopped meanwhile (its container is going away; the worker throws the
// result away too).
type observed struct {
	Prober
	observe func(actors.Probed)
}

func (o observed) Probe(ctx context.Context, t Target, h corev1.ProbeHandler, timeout time.Duration) (Result, string) {
	res, msg := o.Prober.Probe(ctx, t, h, timeout)
	if ctx.Err() != nil {
		return res, msg
	}
	out := actors.ProbeFailed
	switch {
	case res == Unknown:
		out = actors.ProbeErrored
	case res == Success && strings.HasPrefix(msg, redirectWarning):
		out = actors.ProbeWarned
	case res == Success:
		out = actors.ProbeSucceeded
	}
	o.observe(actors.Probed{Container: t.name(), ContainerID: t.ContainerID, Kind: kindPB(t.Kind), Outcome: out, Message: msg})
	return res, msg
}
