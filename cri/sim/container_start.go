package sim

import (
	"context"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// StartContainer starts a CREATED container: it becomes RUNNING with
// started_at set, and CONTAINER_STARTED_EVENT is emitted. With
// SIM_EXIT_AFTER=0s it exits within the same call (a STOPPED event
// follows); with a longer duration a timer makes it exit later.
//
// Errors: NotFound for an unknown ID; FailedPrecondition if the container
// is not CREATED (a container never starts twice) or its sandbox is not
// READY — both are recorded as violations.
func (r *Runtime) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	unlock, err := r.begin(ctx, "StartContainer")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, newErr(ErrNotFound, "StartContainer: container %q not found", req.GetContainerId())
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		r.violationLocked("StartContainer %s (%s): container is %s, not CREATED", c, c.id, c.state)
		return nil, newErr(ErrFailedPrecondition, "StartContainer %s (%s): container is in state %s; only a CREATED container can be started",
			c, c.id, c.state)
	}
	if !c.sb.ready {
		if !c.sb.rebooted {
			r.violationLocked("StartContainer %s (%s): sandbox %q is NOTREADY", c, c.id, c.sb.id)
		}
		return nil, newErr(ErrFailedPrecondition, "StartContainer %s (%s): sandbox %q is not ready", c, c.id, c.sb.id)
	}
	now := r.now()
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = now
	r.running++
	r.log.Debug("container started", zap.String("container", c.id), zap.Stringer("name", c))
	r.emitLocked(c.id, c.sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	r.catFilesLocked(c) // SIM_CAT_FILES

	if b := c.behaviour; b.exits {
		p := exitPlan{at: now + int64(b.exitAfter), code: b.exitCode, reason: b.exitReason}
		if b.exitAfter == 0 {
			r.exitLocked(c, p)
		} else {
			r.scheduleExitLocked(c, p)
		}
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.serveLocked(c) // SIM_HTTP_PORT, SIM_TCP_PORT
	}
	return &runtimeapi.StartContainerResponse{}, nil
}
