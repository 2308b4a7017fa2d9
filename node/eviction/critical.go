package eviction

import (
	corev1 "k8s.io/api/core/v1"
)

// The annotations that mark static and mirror pods (as in the kubelet's
// pkg/kubelet/types).
const (
	annotationConfigSource = "kubernetes.io/config.source"
	annotationConfigMirror = "kubernetes.io/config.mirror"
	configSourceAPI        = "api"
)

// SystemCriticalPriority is the lowest priority of a critical pod
// (scheduling.k8s.io SystemCriticalPriority).
const SystemCriticalPriority int32 = 2_000_000_000

// IsCritical reports whether the kubelet treats pod as critical: a static
// pod (config.source other than "api"), a mirror pod, or a pod whose
// spec.priority is at least SystemCriticalPriority. Critical pods are never
// evicted and always admitted.
func IsCritical(pod *corev1.Pod) bool {
	if src, ok := pod.Annotations[annotationConfigSource]; ok && src != configSourceAPI {
		return true
	}
	if _, ok := pod.Annotations[annotationConfigMirror]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= SystemCriticalPriority
}
