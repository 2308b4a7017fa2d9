package podspec

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
)

// The kubelet's OOM score adjustments (k8s.io/kubernetes pkg/kubelet/qos,
// policy.go); the kubelet's own -999 does not apply to actorlet.
const (
	guaranteedOOMScoreAdj int64 = -997
	besteffortOOMScoreAdj int64 = 1000
	// minBurstableOOMScoreAdj keeps a Burstable container above a
	// Guaranteed one using all of the node's memory (score 1000-997 = 3).
	minBurstableOOMScoreAdj = 1000 + guaranteedOOMScoreAdj
	// maxBurstableOOMScoreAdj keeps it below BestEffort ones.
	maxBurstableOOMScoreAdj = besteffortOOMScoreAdj - 1

	// systemCriticalPriority is scheduling.SystemCriticalPriority.
	systemCriticalPriority int32 = 2000000000
	// systemNodeCritical is the priority class of node-critical pods.
	systemNodeCritical = "system-node-critical"
	// The pod source annotations; a config.source other than "api" is a
	// static pod (node/staticpod), a config.mirror a mirror pod.
	annotationConfigSource = "kubernetes.io/config.source"
	annotationConfigMirror = "kubernetes.io/config.mirror"
	apiserverSource        = "api"
)

// ContainerOOMScoreAdj is the oom_score_adj of a container's processes, as
// the kubelet's GetContainerOOMScoreAdjust sets it: -997 for a node-critical
// pod and for a Guaranteed one, 1000 for a BestEffort one, and for a
// Burstable one 1000 - 1000*memoryRequest/memoryCapacity clamped to
// [3, 999]. A container with a memory limit and no request requests its
// limit (the API's defaulting, which static pods do not get).
//
// memoryCapacity is the node's memory capacity in bytes. The kubelet
// always knows it (and would divide by zero without); here 0 means unknown,
// and a Burstable container then gets 999, the score of a Burstable
// container requesting no memory: above every Guaranteed one, below every
// BestEffort one.
//
// Left out of the kubelet's policy: the sidecar rule (a restartable init
// container scores no higher than the pod's smallest regular container),
// pod-level resources (spec.resources) and DRA memory claims.
func ContainerOOMScoreAdj(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) int64 {
	if isNodeCriticalPod(pod) {
		return guaranteedOOMScoreAdj
	}
	switch lifecycle.QOSClass(pod) {
	case corev1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	if memoryCapacity <= 0 {
		return maxBurstableOOMScoreAdj
	}
	req, ok := c.Resources.Requests[corev1.ResourceMemory]
	if !ok {
		req = c.Resources.Limits[corev1.ResourceMemory]
	}
	if req.Value() >= memoryCapacity { // and no overflow of 1000*request
		return minBurstableOOMScoreAdj
	}
	adj := 1000 - (1000*req.Value())/memoryCapacity
	return min(max(adj, minBurstableOOMScoreAdj), maxBurstableOOMScoreAdj)
}

// isStaticPod is the kubelet's IsStaticPod: a config.source annotation
// that is not the API server's.
func isStaticPod(pod *corev1.Pod) bool {
	src, ok := pod.Annotations[annotationConfigSource]
	return ok && src != apiserverSource
}

// isNodeCriticalPod is the kubelet's IsNodeCriticalPod: priority class
// system-node-critical on a critical pod, one that is static, mirrored, or
// of priority at least system-critical.
func isNodeCriticalPod(pod *corev1.Pod) bool {
	if pod.Spec.PriorityClassName != systemNodeCritical {
		return false
	}
	if isStaticPod(pod) {
		return true
	}
	if _, ok := pod.Annotations[annotationConfigMirror]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}
