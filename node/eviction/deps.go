package eviction

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// SummaryProvider gives the node's stats summary, as the kubelet's
// /stats/summary serves it. Fresh stats are expected on each call; stats
// that did not move since the last pass (same times) are not acted on.
type SummaryProvider interface {
	Get(ctx context.Context) (*statsv1alpha1.Summary, error)
}

// Reclaimer frees node-level resources for a filesystem signal before pods
// are evicted: dead containers, then unused images, as the kubelet does
// (with a dedicated image filesystem, only dead containers help
// nodefs.*). It is optional.
type Reclaimer interface {
	Reclaim(ctx context.Context, signal Signal) error
}

// PodsFunc lists the node's active pods: admitted and not yet terminated.
// It must not block. A pod already being evicted may be listed: it is then
// ranked like any other, as the kubelet ranks pods still terminating.
type PodsFunc func() []*corev1.Pod

// EvictFunc kills pod with the given grace period and marks it failed with
// reason and message, as the kubelet's eviction does (the pod's status
// phase Failed, reason "Evicted", and a DisruptionTarget condition). An
// error makes the Manager try the next candidate in the same pass.
type EvictFunc func(ctx context.Context, pod *corev1.Pod, reason, message string, grace time.Duration) error
