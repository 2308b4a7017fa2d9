package sim

import (
	"context"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RunPodSandbox creates a READY sandbox with a new random 64-hex ID and an
// IP from the pod CIDR (the host IP for sandboxes in the node network
// namespace). It emits CONTAINER_CREATED_EVENT and CONTAINER_STARTED_EVENT
// with the sandbox ID.
//
// Errors: InvalidArgument without metadata or for an unknown runtime
// handler; AlreadyExists while a sandbox with the same metadata (name,
// namespace, uid, attempt) exists; ResourceExhausted when the pod CIDR is
// full; Unknown (ErrScripted) with the message of the config's annotation
// AnnotationRunPodSandboxError, whenever it is set. A second READY sandbox for one pod UID is created but recorded as
// a violation.
func (r *Runtime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	meta := cfg.GetMetadata()
	if meta == nil {
		return nil, newErr(ErrInvalidArgument, "RunPodSandbox: sandbox config metadata is required")
	}
	unlock, err := r.begin(ctx, "RunPodSandbox")
	if err != nil {
		return nil, err
	}
	defer unlock()

	sm := newSandboxMeta(meta)
	name := func() string { return sandboxName(sm) } // for errors only
	if !r.handlers[req.GetRuntimeHandler()] {
		return nil, newErr(ErrInvalidArgument, "RunPodSandbox %s: unknown runtime handler %q", name(), req.GetRuntimeHandler())
	}
	if msg, ok := cfg.GetAnnotations()[AnnotationRunPodSandboxError]; ok {
		return nil, newErr(ErrScripted, "RunPodSandbox %s: %s", name(), msg)
	}
	if owner := r.sandboxNamedLocked(sm); owner != nil {
		return nil, newErr(ErrAlreadyExists, "RunPodSandbox: sandbox name %q is reserved for sandbox %q", name(), owner.id)
	}

	nsOpts := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	sb := &sandbox{
		id:          r.newID(),
		meta:        sm,
		labels:      r.keySets.newPairs(cfg.GetLabels()),
		annotations: r.keySets.newPairs(cfg.GetAnnotations()),
		logDir:      cfg.GetLogDirectory(),
		createdAt:   r.now(),
		order:       r.nextOrder(),
		ready:       true,
	}
	podUID := sb.podUID()
	if hasUnknown(meta) {
		sb.moreOf().meta = cloneMsg(meta)
	}
	var ok bool
	if sb.ns, ok = newNSModes(nsOpts); !ok {
		sb.moreOf().ns = cloneMsg(nsOpts)
	}
	if h := req.GetRuntimeHandler(); h != "" {
		sb.moreOf().handler = h
	}
	if nsOpts.GetNetwork() == runtimeapi.NamespaceMode_NODE {
		sb.ip = r.hostIP
	} else {
		ip, err := r.ipam.allocate()
		if err != nil {
			return nil, err
		}
		sb.ip, sb.ipPooled = ip, true
	}

	if podUID != "" {
		if n := r.readyOfPodLocked(podUID); n > 0 {
			r.violationLocked("RunPodSandbox %s: pod UID %q already has %d READY sandbox(es)", sb, podUID, n)
		}
	}
	r.readySandboxes++
	r.sandboxes[sb.id] = sb
	r.addSandboxLocked(sb)
	r.log.Debug("sandbox ready", zap.String("sandbox", sb.id), zap.Stringer("name", sb), zap.Stringer("ip", sb.ip))
	r.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	r.emitLocked(sb.id, sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: sb.id}, nil
}
