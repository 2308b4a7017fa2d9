package sim

import (
	"context"
	"slices"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RemoveContainer removes a container. As in containerd, a running
// container is killed first (exit code 137, reason "Error",
// CONTAINER_STOPPED_EVENT); then CONTAINER_DELETED_EVENT is emitted and
// its name can be reused.
//
// Idempotent: an unknown ID is not an error.
func (r *Runtime) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	unlock, err := r.begin(ctx, "RemoveContainer")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c, ok := r.containers[req.GetContainerId()]; ok {
		r.removeContainerLocked(c)
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (r *Runtime) removeContainerLocked(c *container) {
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.exitLocked(c, killPlan(r.now(), "killed by RemoveContainer"))
	}
	r.stopServingLocked(c)
	c.cancelTimer()
	delete(r.containers, c.id)
	r.containersByPod.remove(c.labels, c)
	if i := slices.Index(c.sb.containers, c); i >= 0 {
		c.sb.containers = slices.Delete(c.sb.containers, i, i+1) // zeroes the freed slot
	}
	r.log.Debug("container removed", zap.String("container", c.id), zap.Stringer("name", c))
	r.emitLocked(c.id, c.sb, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
}
