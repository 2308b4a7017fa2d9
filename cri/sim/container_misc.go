package sim

import (
	"context"
	"os"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// UpdateContainerResources records new Linux resources for a container in
// any state; ContainerStatus reports them. NotFound for an unknown ID.
func (r *Runtime) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	unlock, err := r.begin(ctx, "UpdateContainerResources")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, newErr(ErrNotFound, "UpdateContainerResources: container %q not found", req.GetContainerId())
	}
	if req.GetLinux() != nil {
		c.setResources(req.GetLinux())
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// ReopenContainerLog succeeds for any existing container (the simulator
// writes to a log only for SIM_CAT_FILES, at start). NotFound for an unknown ID.
func (r *Runtime) ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	unlock, err := r.begin(ctx, "ReopenContainerLog")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, newErr(ErrNotFound, "ReopenContainerLog: container %q not found", req.GetContainerId())
	}
	// As a runtime reopening a rotated log: a new (here empty) file at the
	// container's log path.
	if logPath := c.logPath(); logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return nil, newErr(ErrFailedPrecondition, "ReopenContainerLog %s: %v", c.id, err)
		}
		f.Close()
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// ExecSync "runs" a command in a running container: empty output and the
// exit code of SIM_EXEC_EXIT_CODE (default 0). NotFound for an unknown
// ID, FailedPrecondition if the container is not running.
func (r *Runtime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	unlock, err := r.begin(ctx, "ExecSync")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, newErr(ErrNotFound, "ExecSync: container %q not found", req.GetContainerId())
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, newErr(ErrFailedPrecondition, "ExecSync %s (%s): container is in state %s, not running", c, c.id, c.state)
	}
	return &runtimeapi.ExecSyncResponse{Stdout: []byte{}, Stderr: []byte{}, ExitCode: c.behaviour.execExitCode}, nil
}
