package agent

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// volumeUpkeep keeps the node's pod volumes: every period it writes
// changed ConfigMap, Secret, downward API and token contents into the
// volumes of the pods that run, and removes the pod directories no pod
// actor owns. A removed pod's own tear-down is its CleanUpPod effect, whose
// outcome is journaled (a crash before it hands it out again); this sweep
// is the net for directories of UIDs the journal does not know (a journal
// lost or quarantined, a pod compacted away, a directory from elsewhere).
func (a *Agent) volumeUpkeep(ctx context.Context, v Volumes, period time.Duration) {
	t := a.cfg.clock.NewTicker(period)
	defer t.Stop()
	for {
		a.sweepOrphanVolumes(ctx, v)
		// The stored pods, read only: Refresh reads the spec and metadata.
		a.statuses.EachUnfinished(func(pod *corev1.Pod) {
			if len(pod.Spec.Volumes) == 0 || ctx.Err() != nil {
				return
			}
			if err := v.Refresh(ctx, pod); err != nil && ctx.Err() == nil {
				a.log.Info("refresh pod volumes", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Error(err))
			}
		})
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// sweepOrphanVolumes tears down pod directories of UIDs without a pod
// actor. The directories are listed before the actors, so a pod that
// starts meanwhile is among the actors.
func (a *Agent) sweepOrphanVolumes(ctx context.Context, v Volumes) {
	dirs, err := v.PodDirs(ctx)
	if err != nil {
		a.log.Warn("list pod directories", zap.Error(err))
		return
	}
	if len(dirs) == 0 {
		return
	}
	active, err := a.ActivePods(ctx)
	if err != nil {
		return
	}
	owned := make(map[string]bool, len(active))
	for _, uid := range active {
		owned[uid] = true
	}
	for _, uid := range dirs {
		if owned[uid] {
			continue
		}
		if err := v.TearDown(ctx, uid); err != nil {
			a.log.Warn("remove an orphaned pod directory", zap.String("uid", uid), zap.Error(err))
			continue
		}
		a.log.Info("removed an orphaned pod directory", zap.String("uid", uid), zap.String("dir", v.PodDir(uid)))
	}
}
