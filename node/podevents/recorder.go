// Package podevents turns a PodActor's journaled events into the API
// events the kubelet records, with the kubelet's reasons (Pulling, Pulled,
// Failed, Created, Started, Killing, BackOff, FailedCreatePodSandBox,
// SandboxChanged, Unhealthy, ProbeWarning, the in-place resize's
// ResizeStarted, ResizeCompleted, ResizeDeferred, ResizeInfeasible and
// ResizeError, and the
// admission reasons of rejected pods).
//
// Guarantees: an API event is emitted only for what the journal holds
// (Recorded) or for an effect of a journaled state about to run (Acting);
// adoptions found on recovery (Recovered events) emit nothing, since the
// run that did the work recorded it. Probe events are the exception, as
// the kubelet's: one per probe run (Probed), which is not journaled.
// Recording never blocks: client-go's broadcaster drops events when its
// queue is full.
package podevents

import (
	"fmt"
	"time"

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
	ProbeWarning           = "ProbeWarning"
	FailedPostStartHook    = "FailedPostStartHook"
	FailedPreStopHook      = "FailedPreStopHook"
	FailedMount            = "FailedMount"
	ErrImageNeverPull      = "ErrImageNeverPull"
	Evicted                = "Evicted"
)

// Container waiting reasons that name an event's "Error: ..." message.
const (
	ReasonErrImagePull     = "ErrImagePull"
	ReasonImagePullBackOff = "ImagePullBackOff"
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
)

// Recorder records pod events through a client-go EventRecorder (whose
// EventCorrelator aggregates similar events and rate-limits each source
// and object, as for the kubelet). It implements actors.EventSink. Events
// about one container carry its field path (spec.containers{name}), as the
// kubelet's do.
type Recorder struct {
	rec record.EventRecorder
}

var _ actors.EventSink = Recorder{}

// New returns a Recorder writing through rec.
func New(rec record.EventRecorder) Recorder { return Recorder{rec: rec} }

// Event is one API event: its type, reason, message, and the container it
// is about ("" for the pod).
type Event struct {
	Type, Reason, Message string
	Container             string
}

// Recorded implements actors.EventSink.
func (r Recorder) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	if pod == nil {
		return
	}
	for _, env := range events {
		for _, e := range Translate(pod, env.GetEvent()) {
			r.emit(pod, e)
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
		r.emit(pod, Event{corev1.EventTypeNormal, Pulling, fmt.Sprintf("Pulling image %q", e.Image), e.Container})
	}
}

var _ actors.RetrySink = Recorder{}

// Retrying implements actors.RetrySink: the kubelet's event for the
// failure, which client-go's correlator aggregates over the retries.
func (r Recorder) Retrying(pod *corev1.Pod, effect lifecycle.Effect, err error) {
	if e, ok := RetryEvent(effect, err); ok && pod != nil {
		r.emit(pod, e)
	}
}

// RetryEvent is the kubelet's event for an effect failing with err.
func RetryEvent(effect lifecycle.Effect, err error) (Event, bool) {
	switch e := effect.(type) {
	case lifecycle.RunSandbox:
		return Event{corev1.EventTypeWarning, FailedCreatePodSandBox, "Failed to create pod sandbox: " + err.Error(), ""}, true
	case lifecycle.PullImage:
		return Event{corev1.EventTypeWarning, Failed, fmt.Sprintf("Failed to pull image %q: %s", e.Image, err), e.Container}, true
	case lifecycle.CreateContainer:
		return Event{corev1.EventTypeWarning, Failed, "Error: " + err.Error(), e.Name}, true
	case lifecycle.StartContainer:
		return Event{corev1.EventTypeWarning, Failed, "Error: " + err.Error(), e.Name}, true
	}
	return Event{}, false
}

func (r Recorder) emit(pod *corev1.Pod, e Event) {
	if e.Container == "" {
		r.rec.Event(pod, e.Type, e.Reason, e.Message)
		return
	}
	r.rec.Event(containerRef(pod, e.Container), e.Type, e.Reason, e.Message)
}

// containerRef is the kubelet's reference to a container of pod:
// the pod's, with the container's field path.
func containerRef(pod *corev1.Pod, name string) *corev1.ObjectReference {
	path := fmt.Sprintf("spec.containers{%s}", name)
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			path = fmt.Sprintf("spec.initContainers{%s}", name)
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			path = fmt.Sprintf("spec.ephemeralContainers{%s}", name)
		}
	}
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: path}
}

// Translate maps a journal event to the API events the kubelet records for
// it (none, one, or two: a failure's own event and its "Error: REASON").
// pod is the pod as accepted.
func Translate(pod *corev1.Pod, ev *pb.Event) []Event {
	normal := func(reason, msg, container string) []Event {
		return []Event{{corev1.EventTypeNormal, reason, msg, container}}
	}
	warning := func(reason, msg, container string) []Event {
		return []Event{{corev1.EventTypeWarning, reason, msg, container}}
	}
	switch e := ev.GetKind().(type) {
	case *pb.Event_PodRejected:
		return warning(e.PodRejected.Reason, e.PodRejected.Message, "")
	case *pb.Event_ImagePulled:
		p := e.ImagePulled
		if p.PullNanos == 0 {
			return normal(Pulled, fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", p.Image), p.Container)
		}
		d := time.Duration(p.PullNanos)
		return normal(Pulled, fmt.Sprintf("Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.",
			p.Image, d, d, p.ImageSize), p.Container)
	case *pb.Event_ImagePullFailed:
		f := e.ImagePullFailed
		first := warning(Failed, fmt.Sprintf("Failed to pull image %q: %s", f.Image, f.Message), f.Container)
		if f.Reason == ErrImageNeverPull {
			first = warning(ErrImageNeverPull, fmt.Sprintf("Container image %q is not present with pull policy of Never", f.Image), f.Container)
		}
		return append(first, warning(Failed, "Error: "+f.Reason, f.Container)...)
	case *pb.Event_SandboxFailed:
		if e.SandboxFailed.Reason == FailedMount {
			return warning(FailedMount, e.SandboxFailed.Message, "")
		}
		return warning(FailedCreatePodSandBox, "Failed to create pod sandbox: "+e.SandboxFailed.Message, "")
	case *pb.Event_SandboxLost:
		return normal(SandboxChanged, "Pod sandbox changed, it will be killed and re-created.", "")
	case *pb.Event_ContainerStopRequested:
		// From the stop's journaled intent: once per container, not again
		// when the stop is tried again or after a crash.
		return normal(Killing, "Stopping container "+e.ContainerStopRequested.Name, e.ContainerStopRequested.Name)
	case *pb.Event_ContainerCreated:
		if !e.ContainerCreated.Recovered {
			return normal(Created, "Container created", e.ContainerCreated.Name)
		}
	case *pb.Event_ContainerFailed:
		return warning(Failed, "Error: "+e.ContainerFailed.Message, e.ContainerFailed.Name)
	case *pb.Event_ContainerStarted:
		if !e.ContainerStarted.Recovered {
			return normal(Started, "Container started", e.ContainerStarted.Name)
		}
	case *pb.Event_BackOffStarted:
		b := e.BackOffStarted
		switch b.Reason {
		case ReasonCrashLoopBackOff:
			return warning(BackOff, fmt.Sprintf("Back-off restarting failed container %s in pod %s", b.Name, podName(pod)), b.Name)
		case ReasonImagePullBackOff:
			return append(normal(BackOff, b.Message, b.Name), warning(Failed, "Error: "+ReasonImagePullBackOff, b.Name)...)
		}
	case *pb.Event_ActiveDeadlineExceeded:
		return normal(lifecycle.ReasonDeadlineExceeded, lifecycle.MessageDeadlineExceeded, "")
	case *pb.Event_PodEvicted:
		return warning(e.PodEvicted.Reason, e.PodEvicted.Message, "")
	case *pb.Event_ProbeChanged:
		// Nothing: the kubelet's Unhealthy is recorded for every failed
		// probe run (ProbeEvent), the run that crossed the threshold
		// included.
	case *pb.Event_HookFailed:
		// As the kubelet: the hook's output stays out of the event (it may
		// hold secrets); the node's log has it.
		h := e.HookFailed
		if h.Hook == lifecycle.HookPreStop {
			return warning(FailedPreStopHook, "PreStopHook failed", h.Name)
		}
		return warning(FailedPostStartHook, "PostStartHook failed", h.Name)
	case *pb.Event_HookDecided:
		return lifecycleHookEvents(e.HookDecided)
	case *pb.Event_PodResizeAllocated, *pb.Event_PodResizePending, *pb.Event_ContainerResizeFailed, *pb.Event_PodResizeCompleted:
		return resizeEvents(pod, ev)
	}
	return nil
}

var _ actors.ProbeSink = Recorder{}

// Probed implements actors.ProbeSink: the kubelet prober's event for one
// probe run, if any.
func (r Recorder) Probed(pod *corev1.Pod, p actors.Probed) {
	if e, ok := ProbeEvent(p); ok && pod != nil {
		r.emit(pod, e)
	}
}

// ProbeEvent is the event the kubelet's prober records for one probe run:
// Unhealthy for a failed or errored run, ProbeWarning for a warning, none
// for a success.
func ProbeEvent(p actors.Probed) (Event, bool) {
	kind := probeName(p.Kind)
	switch p.Outcome {
	case actors.ProbeFailed:
		return Event{corev1.EventTypeWarning, Unhealthy, fmt.Sprintf("%s probe failed: %s", kind, p.Message), p.Container}, true
	case actors.ProbeErrored:
		return Event{corev1.EventTypeWarning, Unhealthy,
			fmt.Sprintf("%s probe errored and resulted in unknown state: %s", kind, p.Message), p.Container}, true
	case actors.ProbeWarned:
		return Event{corev1.EventTypeWarning, ProbeWarning, fmt.Sprintf("%s probe warning: %s", kind, p.Message), p.Container}, true
	}
	return Event{}, false
}

// podName is the kubelet's format.Pod: name_namespace(uid).
func podName(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
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

// ActorRespawned is the reason of the Warning event of a pod whose actor
// failed too often and is started again after back-off.
const ActorRespawned = "ActorRespawned"

var _ actors.RespawnSink = Recorder{}

// Respawning implements actors.RespawnSink: a Warning event on the pod.
func (r Recorder) Respawning(pod *corev1.Pod, _ string, after time.Duration, respawns int) {
	if pod == nil {
		return
	}
	r.rec.Eventf(pod, corev1.EventTypeWarning, ActorRespawned,
		"The pod's actor failed too often and was stopped; it is started again in %s (respawn %d), reloading the pod from the journal", after, respawns)
}
