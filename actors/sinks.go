package actors

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// StatusSinks hands each update to every sink in turn; they share it, so
// none of them may change it (PodUpdate.Status included).
type StatusSinks []StatusSink

// PodStatus implements StatusSink.
func (s StatusSinks) PodStatus(u PodUpdate) {
	for _, sink := range s {
		sink.PodStatus(u)
	}
}

// EventSink is told what a PodActor recorded and what it is about to do,
// for the pod's API events. Its methods are called from the actor's
// goroutine and must not block; pod is shared and must not be changed.
type EventSink interface {
	// Recorded: events now durable in the pod's journal. pod is the pod as
	// accepted; nil for an orphan (runtime objects without a spec).
	Recorded(pod *corev1.Pod, events []*pb.Envelope)
	// Acting: an effect of a journaled state is about to run (stopping a
	// container; PullImage only when the image is really pulled, not when
	// it is present).
	Acting(pod *corev1.Pod, effect lifecycle.Effect)
}

// RebuildSink is told of each pod whose lost journal history was rebuilt
// from the runtime, once the rebuilt state is durable. damage says what was
// lost. Called from the actor's goroutine; it must not block.
type RebuildSink interface {
	Rebuilt(pod *corev1.Pod, damage string)
}

// RespawnSink is told of each PodActor that failed more often than its
// restart strategy allows (10 times in 10 s) and was stopped: the
// Supervisor starts it again after back-off, reloading the pod from the
// journal. pod is the pod as its source last gave it (nil if none does);
// respawns counts the respawns of this pod so far, this one included. Called from the
// Supervisor's goroutine; it must not block.
type RespawnSink interface {
	Respawning(pod *corev1.Pod, uid string, after time.Duration, respawns int)
}

// AppendHealth is told of PodActors whose journal appends fail: a pod is
// failing from its first failed append until its next successful one.
// Called from actor goroutines; it must not block.
type AppendHealth interface {
	AppendFailed(podUID string, err error)
	AppendSucceeded(podUID string)
}

// EventSinks tells each sink in turn; nil sinks are skipped.
type EventSinks []EventSink

// Recorded implements EventSink.
func (s EventSinks) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	for _, sink := range s {
		if sink != nil {
			sink.Recorded(pod, events)
		}
	}
}

// Acting implements EventSink.
func (s EventSinks) Acting(pod *corev1.Pod, effect lifecycle.Effect) {
	for _, sink := range s {
		if sink != nil {
			sink.Acting(pod, effect)
		}
	}
}

// RetrySink is an optional extension of an EventSink: it is told of an
// effect of a journaled state that failed with a transient runtime error
// (unavailable, timeout, internal) and will be retried as it is. Nothing is
// journaled for such a failure, so the pod's status does not change; the
// sink can still show the runtime's message (the kubelet's
// FailedCreatePodSandBox event). Called from the actor's goroutine; it
// must not block.
type RetrySink interface {
	Retrying(pod *corev1.Pod, effect lifecycle.Effect, err error)
}

// Retrying implements RetrySink for the sinks that implement it.
func (s EventSinks) Retrying(pod *corev1.Pod, effect lifecycle.Effect, err error) {
	for _, sink := range s {
		if r, ok := sink.(RetrySink); ok {
			r.Retrying(pod, effect, err)
		}
	}
}
