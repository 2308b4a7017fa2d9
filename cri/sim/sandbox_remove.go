package sim

import (
	"context"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RemovePodSandbox removes the sandbox and all its containers. A READY
// sandbox is stopped first, exactly as by StopPodSandbox. Events:
// those of the stop, CONTAINER_DELETED_EVENT per container, then one for
// the sandbox (carrying its last status).
//
// Idempotent: an unknown ID is not an error.
func (r *Runtime) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	unlock, err := r.begin(ctx, "RemovePodSandbox")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if sb, ok := r.sandboxes[req.GetPodSandboxId()]; ok {
		r.removeSandboxLocked(sb)
	}
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// removeSandboxLocked implements RemovePodSandbox on an existing sandbox.
func (r *Runtime) removeSandboxLocked(sb *sandbox) {
	r.stopSandboxLocked(sb)
	for _, c := range sb.sortedContainers() {
		r.removeContainerLocked(c)
	}
	delete(r.sandboxes, sb.id)
	r.forgetSandboxLocked(sb)
	r.log.Debug("sandbox removed", zap.String("sandbox", sb.id))
	r.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
}
