package tracing

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Attribute keys. The pod's are the kubelet's (pkg/kubelet/kubelet.go,
// SyncPod, SyncTerminatingPod, SyncTerminatedPod: k8s.pod.uid, k8s.pod,
// k8s.pod.name, k8s.namespace.name, k8s.pod.update_type); the others are
// actorlet's own.
const (
	// PodKey is the pod as namespace/name (the kubelet's klog.KObj(pod)).
	PodKey = attribute.Key("k8s.pod")
	// UpdateTypeKey is the kind of sync, as the kubelet's SyncPodType
	// strings: create, update, sync or kill.
	UpdateTypeKey = attribute.Key("k8s.pod.update_type")
	// JournalSeqKey is the pod's journal sequence number a span concerns:
	// on a sync, the last one the journal holds once the sync appended its
	// events; on an effect, the last one journaled when it was decided (its
	// intent is at or before it); on a sync's span event, that event's.
	JournalSeqKey = attribute.Key("actorlet.journal.seq")
	// JournalSeqFirstKey and JournalSeqLastKey are the range of sequence
	// numbers a sync appended (absent when it appended nothing).
	JournalSeqFirstKey = attribute.Key("actorlet.journal.seq.first")
	JournalSeqLastKey  = attribute.Key("actorlet.journal.seq.last")
	// InputKey is what started a sync (PodDesired, RuntimeObserved,
	// EffectResult, Tick, ...).
	InputKey = attribute.Key("actorlet.input")
	// EffectKey is an effect's key (runsandbox/1, create/web/2, ...).
	EffectKey = attribute.Key("actorlet.effect")
	// AttemptKey is the sandbox's or container's attempt of an effect.
	AttemptKey = attribute.Key("actorlet.attempt")
	// ReasonKey is a failed effect's reason (FailedCreatePodSandBox,
	// CreateContainerError, ErrImagePull, ...).
	ReasonKey = attribute.Key("actorlet.reason")
	// ResultIDKey is the ID of the sandbox or container an effect created.
	ResultIDKey = attribute.Key("actorlet.result.id")
)

// Pod returns the kubelet's pod attributes for a pod; namespace and name
// may be empty (a pod whose spec is unknown), the UID may not.
func Pod(uid, namespace, name string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.K8SPodUIDKey.String(uid)}
	if name != "" {
		attrs = append(attrs,
			PodKey.String(namespace+"/"+name),
			semconv.K8SPodNameKey.String(name),
			semconv.K8SNamespaceNameKey.String(namespace))
	}
	return attrs
}

// Container returns a container's attributes (name, ID); empty values are
// left out.
func Container(name, id string) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if name != "" {
		attrs = append(attrs, semconv.K8SContainerNameKey.String(name))
	}
	if id != "" {
		attrs = append(attrs, semconv.ContainerIDKey.String(id))
	}
	return attrs
}
