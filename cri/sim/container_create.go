package sim

import (
	"context"
	"unique"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CreateContainer creates a CREATED container in a READY sandbox and emits
// CONTAINER_CREATED_EVENT. The image (config.image.image: an image ID or a
// reference) must have been pulled.
//
// Errors: InvalidArgument without metadata/name/image or for bad SIM_*
// variables; NotFound for an unknown sandbox or an image not present;
// FailedPrecondition (and a recorded violation) if the sandbox is not
// READY; AlreadyExists while a container with the same name and attempt
// exists in the sandbox.
func (r *Runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	meta := cfg.GetMetadata()
	if meta.GetName() == "" {
		return nil, newErr(ErrInvalidArgument, "CreateContainer in sandbox %q: container metadata with a name is required", req.GetPodSandboxId())
	}
	if cfg.GetImage().GetImage() == "" {
		return nil, newErr(ErrInvalidArgument, "CreateContainer %q in sandbox %q: image is required", meta.GetName(), req.GetPodSandboxId())
	}
	b, err := parseBehaviour(cfg.GetEnvs())
	if err != nil {
		return nil, newErr(ErrInvalidArgument, "CreateContainer %q in sandbox %q: %v", meta.GetName(), req.GetPodSandboxId(), err)
	}
	unlock, err := r.begin(ctx, "CreateContainer")
	if err != nil {
		return nil, err
	}
	defer unlock()

	sb, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, newErr(ErrNotFound, "CreateContainer %q: sandbox %q not found", meta.GetName(), req.GetPodSandboxId())
	}
	name := func() string { return containerName(meta.GetName(), meta.GetAttempt(), sb) } // for errors only
	if !sb.ready {
		if !sb.rebooted { // a reboot the client had no way to see yet is no misuse
			r.violationLocked("CreateContainer %s: sandbox %q is NOTREADY", name(), sb.id)
		}
		return nil, newErr(ErrFailedPrecondition, "CreateContainer %s: sandbox %q is not ready", name(), sb.id)
	}
	img := r.images.resolve(cfg.GetImage().GetImage())
	if img == nil {
		return nil, newErr(ErrNotFound, "CreateContainer %s: image %q not present, pull it first", name(), cfg.GetImage().GetImage())
	}
	if owner := sb.containerNamed(meta.GetName(), meta.GetAttempt()); owner != nil {
		return nil, newErr(ErrAlreadyExists, "CreateContainer: container name %q is reserved for container %q", name(), owner.id)
	}

	spec := cfg.GetImage()
	c := &container{
		id:          r.newID(),
		sb:          sb,
		metaName:    unique.Make(meta.GetName()),
		attempt:     meta.GetAttempt(),
		stopSignal:  cfg.GetStopSignal(),
		image:       unique.Make(imageRecord{image: spec.GetImage(), userSpecified: spec.GetUserSpecifiedImage(), img: img}),
		labels:      r.keySets.newPairs(cfg.GetLabels()),
		annotations: r.keySets.newPairs(cfg.GetAnnotations()),
		logName:     unique.Make(cfg.GetLogPath()),
		behaviour:   b,
		state:       runtimeapi.ContainerState_CONTAINER_CREATED,
		createdAt:   r.now(),
		order:       r.nextOrder(),
	}
	if logDir := req.GetSandboxConfig().GetLogDirectory(); logDir != "" && logDir != sb.logDir {
		c.moreOf().logDir = logDir
	}
	if hasUnknown(meta) {
		c.moreOf().meta = cloneMsg(meta)
	}
	if !plainImageSpec(spec) {
		c.moreOf().image = cloneMsg(spec)
	}
	var mounts []*runtimeapi.Mount
	if c.mounts, mounts = newMounts(cfg.GetMounts()); mounts != nil {
		c.moreOf().mounts = mounts
	}
	if user := containerUser(cfg.GetLinux().GetSecurityContext()); user != nil {
		c.moreOf().user = user
	}
	c.setResources(cfg.GetLinux().GetResources())
	if err := r.setUsageFromEnvLocked(c, cfg.GetEnvs()); err != nil {
		return nil, newErr(ErrInvalidArgument, "CreateContainer %s: %v", name(), err)
	}
	r.containers[c.id] = c
	r.containersByPod.add(c.labels, c)
	sb.containers = append(sb.containers, c)
	r.log.Debug("container created", zap.String("container", c.id), zap.Stringer("name", c))
	r.emitLocked(c.id, sb, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// containerUser is the identity the process starts with, when the config
// names one.
func containerUser(sc *runtimeapi.LinuxContainerSecurityContext) *runtimeapi.ContainerUser {
	if sc.GetRunAsUser() == nil {
		return nil
	}
	return &runtimeapi.ContainerUser{Linux: &runtimeapi.LinuxContainerUser{
		Uid:                sc.GetRunAsUser().GetValue(),
		Gid:                sc.GetRunAsGroup().GetValue(),
		SupplementalGroups: append([]int64(nil), sc.GetSupplementalGroups()...),
	}}
}
