package sim

import (
	"context"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// StopContainer stops a running container with a grace period of
// req.timeout seconds, and returns once it has exited:
//   - timeout 0: killed at once (exit code 137, reason "Error"), as the CRI
//     asks ("forcibly terminate the container immediately");
//   - SIM_STOP_DELAY unset or 0: it exits at once with SIM_STOP_EXIT_CODE
//     (default 0, reason "Completed");
//   - SIM_STOP_DELAY <= timeout: it exits after the delay with
//     SIM_STOP_EXIT_CODE;
//   - SIM_STOP_DELAY > timeout: it is killed at the timeout (137, "Error").
//
// An earlier pending exit (SIM_EXIT_AFTER, an earlier StopContainer) still
// happens first; a second StopContainer can only bring the kill forward.
// If ctx ends while waiting, StopContainer returns the context's error but
// the stop goes on (the signal was sent).
//
// Idempotent: unknown, CREATED and EXITED containers are left alone and
// the call succeeds (as in containerd).
func (r *Runtime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	unlock, err := r.begin(ctx, "StopContainer")
	if err != nil {
		return nil, err
	}
	c, ok := r.containers[req.GetContainerId()]
	if !ok || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	}
	now := r.now()
	timeout := time.Duration(req.GetTimeout()) * time.Second
	b := c.behaviour
	graceful := exitPlan{at: now + int64(b.stopDelay), code: b.stopExitCode, reason: reasonFor(b.stopExitCode)}
	switch {
	case timeout <= 0:
		r.exitLocked(c, killPlan(now, "killed by StopContainer with timeout 0"))
	case b.stopDelay == 0:
		r.exitLocked(c, graceful)
	case b.stopDelay <= timeout:
		r.scheduleExitLocked(c, graceful)
	default:
		r.scheduleExitLocked(c, killPlan(now+int64(timeout), fmt.Sprintf("killed after stop timeout of %v", timeout)))
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED {
		r.stopServingLocked(c)
		unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	}
	exited := c.exitedChan()
	unlock()

	select {
	case <-exited:
		r.mu.Lock()
		r.stopServingLocked(c) // its ports are closed when StopContainer returns
		r.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	case <-r.events.done():
		return nil, newErr(ErrClosed, "StopContainer %s (%s): simulated runtime closed while stopping", c, c.id)
	case <-ctx.Done():
		return nil, fmt.Errorf("sim: StopContainer %s (%s): gave up waiting for the exit: %w", c, c.id, ctx.Err())
	}
}
