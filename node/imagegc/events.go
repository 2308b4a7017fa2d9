package imagegc

// The kubelet's event reasons for image garbage collection
// (k8s.io/kubernetes/pkg/kubelet/events).
const (
	// FreeDiskSpaceFailed: a pass found too few removable images to bring
	// usage down to the low threshold.
	FreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	// ImageGCFailed: a pass failed (the runtime could not be listed or
	// measured, or an image could not be removed).
	ImageGCFailed = "ImageGCFailed"
)

// EventTypeWarning is the type of every event the Manager emits
// (corev1.EventTypeWarning).
const EventTypeWarning = "Warning"

// EventFunc receives the events the kubelet would record on its Node object.
// The caller binds it to an EventRecorder and the node's reference, e.g.
//
//	func(typ, reason, msg string) { rec.Event(nodeRef, typ, reason, msg) }
//
// It is called synchronously during a pass and must not block.
type EventFunc func(eventType, reason, message string)
