// Package podevents turns a PodActor's journaled events into the API
// events the kubelet records, with the kubelet's reasons (Pulling, Pulled,
// Failed, Created, Started, Killing, BackOff, FailedCreatePodSandBox,
// SandboxChanged, and the admission reasons of rejected pods).
//
// Guarantees: an API event is emitted only for what the journal holds
// (Recorded) or for an effect of a journaled state about to run (Acting);
// adoptions found on recovery (Recovered events) emit nothing, since the
// run that did the work recorded it. Recording never blocks: client-go's
// broadcaster drops events when its queue is full.
package podevents

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// The kubelet's event reasons (k8s.io/kubernetes/pkg/kubelet/events).
const (
	Pulling                = "Pulling"
	Pulled                 = "Pulled"
	Failed                 = "Failed"
	Created                = "Created"
	Started                = "Started"
	Killing                = "Killing"
	BackOff                = "BackOff"
	FailedCreatePodSandBox = "FailedCreatePodSandBox"
	SandboxChanged         = "SandboxChanged"
	Unhealthy              = "Unhealthy"
	FailedPostStartHook    = "FailedPostStartHook"
	FailedPreStopHook      = "FailedPreStopHook"
	FailedMount            = "FailedMount"
)

// Recorder records pod events through a client-go EventRecorder. It
// implements actors.EventSink.
type Recorder struct {
	rec record.EventRecorder
}

var _ actors.EventSink = Recorder{}

// New returns a Recorder writing through rec.
func New(rec record.EventRecorder) Recorder { return Recorder{rec: rec} }

// Recorded implements actors.EventSink.
func (r Recorder) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	if pod == nil {
		return
	}
	for _, env := range events {
		if kind, reason, msg := Translate(env.GetEvent()); reason != "" {
			r.rec.Event(pod, kind, reason, msg)
		}
	}
}

// Acting implements actors.EventSink.
func (r Recorder) Acting(pod *corev1.Pod, effect lifecycle.Effect) {
	if pod == nil {
		return
	}
	switch e := effect.(type) {
	case lifecycle.PullImage:
		r.rec.Eventf(pod, corev1.EventTypeNormal, Pulling, "Pulling image %q", e.Image)
	case lifecycle.StopContainer:
		r.rec.Eventf(pod, corev1.EventTypeNormal, Killing, "Stopping container %s", e.Name)
	}
}

// Translate maps a journal event to an API event's type, reason and
// message; reason "" means the kubelet records nothing for it.
func Translate(ev *pb.Event) (kind, reason, message string) {
	switch e := ev.GetKind().(type) {
	case *pb.Event_PodRejected:
		return corev1.EventTypeWarning, e.PodRejected.Reason, e.PodRejected.Message
	case *pb.Event_ImagePulled:
		return corev1.EventTypeNormal, Pulled, fmt.Sprintf("Container image %q present as %s", e.ImagePulled.Image, e.ImagePulled.ImageRef)
	case *pb.Event_ImagePullFailed:
		return corev1.EventTypeWarning, Failed, fmt.Sprintf("Failed to pull image %q: %s: %s", e.ImagePullFailed.Image, e.ImagePullFailed.Reason, e.ImagePullFailed.Message)
	case *pb.Event_SandboxFailed:
		if e.SandboxFailed.Reason == FailedMount {
			return corev1.EventTypeWarning, FailedMount, e.SandboxFailed.Message
		}
		return corev1.EventTypeWarning, FailedCreatePodSandBox, "Failed to create pod sandbox: " + e.SandboxFailed.Message
	case *pb.Event_SandboxLost:
		return corev1.EventTypeNormal, SandboxChanged, "Pod sandbox changed, it will be killed and re-created."
	case *pb.Event_ContainerCreated:
		if !e.ContainerCreated.Recovered {
			return corev1.EventTypeNormal, Created, "Created container: " + e.ContainerCreated.Name
		}
	case *pb.Event_ContainerFailed:
		return corev1.EventTypeWarning, Failed, fmt.Sprintf("Error: %s: %s", e.ContainerFailed.Reason, e.ContainerFailed.Message)
	case *pb.Event_ContainerStarted:
		if !e.ContainerStarted.Recovered {
			return corev1.EventTypeNormal, Started, "Started container " + e.ContainerStarted.Name
		}
	case *pb.Event_BackOffStarted:
		return corev1.EventTypeWarning, BackOff, "Back-off restarting failed container " + e.BackOffStarted.Name
	case *pb.Event_ActiveDeadlineExceeded:
		return corev1.EventTypeNormal, lifecycle.ReasonDeadlineExceeded, lifecycle.MessageDeadlineExceeded
	case *pb.Event_PodEvicted:
		return corev1.EventTypeWarning, e.PodEvicted.Reason, e.PodEvicted.Message
	case *pb.Event_ProbeChanged:
		if p := e.ProbeChanged; !p.Success {
			return corev1.EventTypeWarning, Unhealthy, fmt.Sprintf("%s probe failed: %s", probeName(p.Kind), p.Message)
		}
	case *pb.Event_HookFailed:
		h := e.HookFailed
		reason := FailedPostStartHook
		if h.Hook == lifecycle.HookPreStop {
			reason = FailedPreStopHook
		}
		return corev1.EventTypeWarning, reason, fmt.Sprintf("%s hook for container %s failed: %s", h.Hook, h.Name, h.Message)
	}
	return "", "", ""
}

// probeName is the kubelet's name of a probe kind in events.
func probeName(k pb.ProbeKind) string {
	switch k {
	case pb.ProbeKind_PROBE_STARTUP:
		return "Startup"
	case pb.ProbeKind_PROBE_LIVENESS:
		return "Liveness"
	default:
		return "Readiness"
	}
}

// JournalRebuilt is the reason of the Warning event of a pod whose journal
// history was lost and rebuilt from the runtime.
const JournalRebuilt = "JournalRebuilt"

var _ actors.RebuildSink = Recorder{}

// Rebuilt implements actors.RebuildSink: a Warning event on the pod.
func (r Recorder) Rebuilt(pod *corev1.Pod, damage string) {
	if pod == nil {
		return
	}
	r.rec.Eventf(pod, corev1.EventTypeWarning, JournalRebuilt,
		"The pod's journal history was lost (%s); its state was rebuilt from the container runtime, running containers adopted", damage)
}
