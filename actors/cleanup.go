package actors

import (
	"context"
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/podspec"
)

// ReasonCleanUpPodError is the reason of a failed CleanUpPod.
const ReasonCleanUpPodError = "CleanUpPodError"

// cleanUpPod carries out lifecycle.CleanUpPod for the removed pod (pod is
// its spec as journaled; nil for an orphan stream, which has only its
// volumes, found by UID): it tears down the pod's volumes, removes its pod
// cgroup and its pod log directory, in that order, each step tolerating
// what is gone already, so that carrying it out again (after a failure, or
// after a crash before PodCleanedUp was journaled) is harmless. Every step
// is tried even if one before failed; the error joins their failures, each
// naming the pod, and the core tries the effect again after its back-off.
//
// The node's sweep of orphaned pod directories (node/agent) stays the net
// for the directories of UIDs the journal no longer knows.
func (a *containerActor) cleanUpPod(ctx context.Context, pod *corev1.Pod) error {
	var errs []error
	if a.deps.Volumes != nil {
		if err := a.deps.Volumes.TearDown(ctx, a.uid); err != nil {
			errs = append(errs, fmt.Errorf("tear down the volumes of pod %s: %w", a.uid, err))
		}
	}
	if pod != nil && a.deps.PodConfig.CgroupsPerQOS {
		if err := podspec.RemovePodCgroup(podspec.PodCgroupParent(a.deps.PodConfig.CgroupRoot, pod)); err != nil {
			errs = append(errs, fmt.Errorf("remove the cgroup of pod %s: %w", a.uid, err))
		}
	}
	if pod != nil {
		// os.RemoveAll takes a missing directory as removed.
		if dir := podspec.PodLogDir(a.deps.PodConfig.PodLogsDir, pod); dir != "" {
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, fmt.Errorf("remove the log directory %s of pod %s: %w", dir, a.uid, err))
			}
		}
	}
	return errors.Join(errs...)
}
