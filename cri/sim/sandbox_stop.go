package sim

import (
	"context"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// StopPodSandbox kills every running container of the sandbox at once
// (exit code 137, reason "Error", as after containerd's SIGKILL), returns
// the sandbox's IP to the pool (the CRI: "reclaims network resources") and
// makes the sandbox NOTREADY. Events: CONTAINER_STOPPED_EVENT per killed
// container, then one for the sandbox.
//
// Idempotent: stopping a NOTREADY sandbox does nothing, and an unknown ID
// is not an error (as in containerd 2.x).
func (r *Runtime) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	unlock, err := r.begin(ctx, "StopPodSandbox")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if sb, ok := r.sandboxes[req.GetPodSandboxId()]; ok {
		r.stopSandboxLocked(sb)
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// stopSandboxLocked implements StopPodSandbox on an existing sandbox.
func (r *Runtime) stopSandboxLocked(sb *sandbox) {
	if !sb.ready {
		return
	}
	now := r.now()
	for _, c := range sb.sortedContainers() {
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			r.exitLocked(c, killPlan(now, "killed by StopPodSandbox"))
		}
	}
	r.reapServersLocked(sb)
	sb.ready = false
	r.readySandboxes--
	if sb.ipPooled {
		r.ipam.release(sb.ip)
		sb.ipPooled = false
	}
	r.log.Debug("sandbox stopped", zap.String("sandbox", sb.id))
	r.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}
