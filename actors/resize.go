package actors

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/podspec"
)

// containerStatsLister is a runtime that reports container stats
// (cri.Client does), for the memory check of a resize.
type containerStatsLister interface {
	ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error)
}

// updateResources carries out an in-place resize: the running container
// gets the Linux resources of its spec with the effect's CPU and memory (its
// allocation), as a container of that spec would be created with. The call
// is idempotent: the same resources again change nothing. As the kubelet,
// it refuses to set a memory limit (lowered, or set where there was none)
// at or below what the container uses now.
func (a *containerActor) updateResources(ctx context.Context, pod *corev1.Pod, e lifecycle.UpdateContainerResources) error {
	spec := specContainer(pod, e.Name)
	if spec == nil {
		return fmt.Errorf("pod %s has no container %q", a.uid, e.Name)
	}
	c := spec.DeepCopy()
	c.Resources = e.Requirements(c.Resources)
	req := podspec.UpdateContainerResourcesRequest(pod, c, e.ID, a.deps.PodConfig)
	if err := a.checkMemoryLimit(ctx, pod, e, req.Linux.MemoryLimitInBytes); err != nil {
		return err
	}
	if err := a.deps.Runtime.UpdateContainerResources(ctx, e.ID, req.Linux); err != nil {
		return fmt.Errorf("resize container %q (%s) of pod %s: %w", e.Name, e.ID, a.uid, err)
	}
	return nil
}

// checkMemoryLimit is the kubelet's validateMemoryResizeAction for one
// container: a memory limit that goes down (or is set where there was
// none) must stay above the container's memory usage. A runtime that
// reports no stats is not checked.
func (a *containerActor) checkMemoryLimit(ctx context.Context, pod *corev1.Pod, e lifecycle.UpdateContainerResources, limit int64) error {
	sl, ok := a.deps.Runtime.(containerStatsLister)
	if limit == 0 || !ok {
		return nil
	}
	st, err := a.deps.Runtime.ContainerStatus(ctx, e.ID)
	if err != nil {
		return fmt.Errorf("resize container %q (%s) of pod %s: %w", e.Name, e.ID, a.uid, err)
	}
	if cur := st.GetResources().GetLinux().GetMemoryLimitInBytes(); cur != 0 && limit >= cur {
		return nil // not lowered
	}
	stats, err := sl.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{Id: e.ID})
	if err != nil {
		return fmt.Errorf("unable to read memory usage for pod %q: %w", fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID), err)
	}
	var usage *runtimeapi.UInt64Value
	for _, s := range stats {
		if s.GetAttributes().GetId() == e.ID {
			usage = s.GetMemory().GetUsageBytes()
		}
	}
	switch {
	case usage == nil:
		return fmt.Errorf("cannot decrease memory limits: missing container %q memory usage", e.Name)
	case usage.GetValue() >= uint64(limit):
		return &resizeRefusedError{err: fmt.Errorf("cannot decrease memory limits: attempting to set container %q memory limit (%d) below current usage (%d)",
			e.Name, limit, usage.GetValue())}
	}
	return nil
}

// resizeRefusedError is a resize the node refuses as asked (a memory limit
// at or below the container's usage): a definitive failure (cri.KindOf
// finds FailedPrecondition), so the core hears of it at once and reports
// it, as the kubelet does, in the PodResizeInProgress condition with
// reason Error and this message, instead of the effect being retried
// silently as a transient runtime failure. The core still tries again
// after its back-off (the usage may drop), as the kubelet does at each
// sync. Its message is its cause's.
type resizeRefusedError struct{ err error }

func (e *resizeRefusedError) Error() string   { return e.err.Error() }
func (e *resizeRefusedError) Unwrap() []error { return []error{e.err, cri.ErrFailedPrecondition} }
