package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/podspec"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// runEffect asks a ContainerActor to carry out one effect for the pod.
type runEffect struct {
	effect lifecycle.Effect
	// trace: the span of the sync that started the effect (tracing.go).
	trace effectTrace
	pod   *corev1.Pod
	// podIP is the sandbox's IP, for hooks.
	podIP string
	// fresh: a creation's first try, journaled by this incarnation, so
	// there is nothing to look for in the runtime first.
	fresh bool
	// retry: an earlier try of this effect failed, perhaps after it took
	// effect (a reply lost or timed out), so its outcome is looked up first.
	retry bool
}

// effectDone is a ContainerActor's report of an effect.
type effectDone struct {
	effect lifecycle.Effect
	result *pb.EffectResult
	err    error // non-nil: the effect failed; result describes it
	// canceled: err came back after the pod's context was cancelled (its
	// actor or the node is stopping), so it says nothing of the effect.
	canceled bool
	// span is the effect's span (invalid: tracing is off).
	span trace.SpanContext
}

// refresh asks for a new runtime view of the pod.
type refresh struct{}

// listed is a refresh's runtime view; listFailed reports a refresh that
// could not list the runtime.
type (
	listed     struct{ obs *pb.RuntimeObserved }
	listFailed struct {
		err      error
		canceled bool // the pod's context was cancelled: not a failure
	}
)

// containerActor carries out effects for one container (or the sandbox) of
// one pod, one at a time. It keeps no state: everything it needs comes with
// the message.
//
// It is not its PodActor's child in protoactor's sense (see
// podActor.toWorker): it reports to pod, and the PodActor stops it, and
// waits for it, itself.
type containerActor struct {
	// ctx is its PodActor's: cancelled when that stops or restarts, which
	// cuts the CRI call in flight short (see effectDone.canceled).
	ctx  context.Context
	uid  string
	deps *Deps
	// pod is the PodActor it works for, which its reports go to.
	pod *actor.PID
}

func (a *containerActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *runEffect:
		rctx, sp := a.startEffect(a.ctx, m)
		kind, _, _ := strings.Cut(m.effect.Key(), "/")
		if a.deps.Effects != nil {
			a.deps.Effects.EffectStarted(kind)
		}
		res, err := a.run(rctx, m)
		if a.deps.Effects != nil {
			a.deps.Effects.EffectEnded(kind)
		}
		// Whatever error a call returns once the context is cancelled
		// (Canceled, or another the cut left behind) is the stop's, not
		// the effect's.
		canceled := err != nil && rctx.Err() != nil
		ctx.Request(a.pod, &effectDone{effect: m.effect, result: res, err: err, canceled: canceled, span: endEffect(sp, res, err)})
	case *refresh:
		if a.deps.Lister == nil {
			return
		}
		obs, err := a.deps.Lister.ListPodObserved(a.ctx, a.uid)
		if err != nil {
			ctx.Request(a.pod, &listFailed{err: err, canceled: a.ctx.Err() != nil})
			return
		}
		ctx.Request(a.pod, &listed{obs: obs})
	}
}

// run carries out the effect idempotently.
// run carries out m's effect and stamps its outcome with the node's listing
// epoch once the calls returned (see cri.Epochs): a listing that begins
// later must show what they created.
func (a *containerActor) run(ctx context.Context, m *runEffect) (*pb.EffectResult, error) {
	res, err := a.call(ctx, m)
	if res != nil {
		res.Epoch = a.deps.Epochs.Now()
	}
	return res, err
}

// call carries out m's effect.
func (a *containerActor) call(ctx context.Context, m *runEffect) (*pb.EffectResult, error) {
	rt := a.deps.Runtime
	res := &pb.EffectResult{Key: m.effect.Key()}
	switch e := m.effect.(type) {
	case lifecycle.RunSandbox:
		id, err := a.findSandbox(ctx, m.fresh, e.Attempt)
		if err != nil {
			return fail(res, "FailedCreatePodSandBox", err)
		}
		if a.deps.Volumes != nil && len(m.pod.Spec.Volumes) > 0 {
			// Before the sandbox, as the kubelet waits for volumes.
			if _, err := a.deps.Volumes.SetUp(ctx, m.pod); err != nil {
				return fail(res, ReasonFailedMount, &configError{err: err})
			}
		}
		if id == "" {
			// The kubelet's layout: the runtime writes <dir>/<container>/<n>.log.
			if err := mkdirLogs(podspec.PodLogDir(a.deps.PodConfig.PodLogsDir, m.pod)); err != nil {
				return fail(res, "FailedCreatePodSandBox", err)
			}
			cfg, err := podspec.SandboxConfig(m.pod, e.Attempt, a.deps.PodConfig)
			if err != nil {
				return fail(res, "FailedCreatePodSandBox", err)
			}
			if id, err = rt.RunPodSandbox(ctx, cfg, a.deps.PodConfig.RuntimeHandler); err != nil {
				return fail(res, "FailedCreatePodSandBox", err)
			}
		}
		res.Id = id
		st, err := rt.PodSandboxStatus(ctx, id)
		if err != nil {
			return fail(res, "FailedCreatePodSandBox", err)
		}
		res.Ip = st.GetNetwork().GetIp()
	case lifecycle.PullImage:
		if err := a.ensureImage(ctx, m.pod, e, res); err != nil {
			return res, err
		}
	case lifecycle.CreateContainer:
		spec := specContainer(m.pod, e.Name)
		if spec == nil {
			return fail(res, lifecycle.ReasonCreateContainerConfigError, fmt.Errorf("pod %s has no container %q", a.uid, e.Name))
		}
		id, err := a.findContainer(ctx, m.fresh, e.SandboxID, e.Name, e.Attempt)
		if err != nil {
			return fail(res, "CreateContainerError", err)
		}
		if id == "" {
			if err := a.verifyNonRoot(ctx, m.pod, spec); err != nil {
				return fail(res, lifecycle.ReasonCreateContainerConfigError, err)
			}
			// Resolved for each creation, so a changed ConfigMap or Secret
			// is seen by the next attempt; held in memory only.
			env, err := a.containerEnv(ctx, m.pod, spec, e.SandboxID)
			if err != nil {
				return fail(res, lifecycle.ReasonCreateContainerConfigError, err)
			}
			if dir := podspec.PodLogDir(a.deps.PodConfig.PodLogsDir, m.pod); dir != "" {
				if err := mkdirLogs(filepath.Join(dir, e.Name)); err != nil {
					return fail(res, "CreateContainerError", err)
				}
			}
			mounts, err := a.mounts(ctx, m, spec, e.Attempt, env)
			if err != nil {
				return fail(res, lifecycle.ReasonCreateContainerConfigError, err)
			}
			sbCfg := podspec.SandboxConfigBestEffort(m.pod, 0, a.deps.PodConfig)
			cfg := podspec.ContainerConfig(m.pod, spec, e.Attempt, env, a.deps.PodConfig)
			podspec.TargetPIDNamespace(cfg, e.Target) // an ephemeral container's target
			cfg.Mounts = append(cfg.Mounts, mounts...)
			if cfg.Annotations == nil {
				cfg.Annotations = map[string]string{}
			}
			cfg.Annotations[cri.AnnotationRestartCount] = strconv.FormatUint(uint64(e.RestartCount), 10)
			if id, err = rt.CreateContainer(ctx, e.SandboxID, cfg, sbCfg); err != nil {
				return fail(res, "CreateContainerError", err)
			}
		}
		res.Id = id
	case lifecycle.StartContainer:
		if m.retry {
			// The earlier try may have started it (and it may have exited
			// since): a container is started once, never again, as the
			// kubelet never calls StartContainer twice for one container.
			st, err := rt.ContainerStatus(ctx, e.ID)
			if err != nil {
				return fail(res, "RunContainerError", err)
			}
			if st.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED || st.GetStartedAt() != 0 {
				res.StartedAtUnixNano = st.GetStartedAt()
				return res, nil
			}
		}
		// Not cancelled by a stop (context.WithoutCancel: the values
		// stay, the runtime's per-call timeout bounds it): containerd cut
		// inside its task creation reports the container EXITED
		// (StartError, exit 128) and strands its task (containerd issue
		// #11037, see README), so a graceful stop would cost the
		// container a restart. A start is short; a stop waits for it.
		err := rt.StartContainer(context.WithoutCancel(ctx), e.ID)
		if err == nil {
			res.StartedAtUnixNano = a.deps.Clock.Now().UnixNano()
			// PostStart runs once, after this start; a start found done
			// (retried or recovered) does not run it again.
			if post := a.handler(m, e.Name, postStart); post != nil {
				res.HookError = a.runHook(ctx, m, e.Name, e.ID, post)
			}
			return res, nil
		}
		// Started before (a retried or recovered start)? Then that start counts.
		if st, serr := rt.ContainerStatus(ctx, e.ID); serr == nil && st.GetStartedAt() != 0 {
			res.StartedAtUnixNano = st.GetStartedAt()
			return res, nil
		}
		return fail(res, "RunContainerError", err)
	case lifecycle.StopContainer:
		grace := e.Grace
		// The PreStop hook runs at most once per container: only on the
		// first try of the stop its journaled intent
		// (ContainerStopRequested) made, not on a retry or after a crash.
		if pre := a.handler(m, e.Name, preStop); pre != nil && m.fresh {
			if st, err := rt.ContainerStatus(ctx, e.ID); err == nil && st.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
				// PreStop runs within the grace period; the container
				// gets what is left of it, at least minStopGrace, as the
				// kubelet gives.
				start := a.deps.Clock.Now()
				hctx, cancel := context.WithTimeout(ctx, grace)
				res.HookError = a.runHook(hctx, m, e.Name, e.ID, pre)
				cancel()
				grace = max(grace-a.deps.Clock.Since(start), minStopGrace)
			}
		}
		if err := rt.StopContainer(ctx, e.ID, grace); err != nil {
			return fail(res, "KillContainerError", err)
		}
		st, err := rt.ContainerStatus(ctx, e.ID)
		switch {
		case errors.Is(err, cri.ErrNotFound):
			res.ExitCode, res.ExitReason = 137, "ContainerStatusUnknown"
		case err != nil:
			return fail(res, "KillContainerError", err)
		default:
			res.ExitCode, res.ExitReason, res.Message = st.GetExitCode(), st.GetReason(), cri.TerminationMessage(st)
			res.StartedAtUnixNano, res.FinishedAtUnixNano = st.GetStartedAt(), st.GetFinishedAt()
		}
	case lifecycle.RemoveContainer:
		if err := a.removeContainer(ctx, e.ID); err != nil {
			return fail(res, "RemoveContainerError", err)
		}
	case lifecycle.StopSandbox:
		if err := rt.StopPodSandbox(ctx, e.ID); err != nil {
			return fail(res, "KillPodSandboxError", err)
		}
	case lifecycle.RemoveSandbox:
		err := rt.RemovePodSandbox(ctx, e.ID)
		if cri.KindOf(err) == cri.FailedPrecondition {
			// Something in it still runs: stop the sandbox (and all in
			// it) again, then remove it.
			if serr := rt.StopPodSandbox(ctx, e.ID); serr == nil {
				err = rt.RemovePodSandbox(ctx, e.ID)
			}
		}
		if cri.KindOf(err) == cri.FailedPrecondition {
			// A container in it the runtime will not remove (see
			// removeContainer): remove them one by one, then the sandbox.
			if rerr := a.removeSandboxContainers(ctx, e.ID); rerr == nil {
				err = rt.RemovePodSandbox(ctx, e.ID)
			}
		}
		if err != nil {
			return fail(res, "RemovePodSandboxError", err)
		}
	case lifecycle.CleanUpPod:
		if err := a.cleanUpPod(ctx, m.pod); err != nil {
			return fail(res, ReasonCleanUpPodError, err)
		}
	case lifecycle.RunHook:
		a.runLifecycleHook(ctx, e, m.pod, res)
	case lifecycle.UpdateContainerResources:
		if err := a.updateResources(ctx, m.pod, e); err != nil {
			return fail(res, "ResizeError", err)
		}
	default:
		return fail(res, "Unknown", fmt.Errorf("unknown effect %T", e))
	}
	return res, nil
}

// strandedTaskEnder is a runtime that can end the task of a container it
// reports exited but will not remove (cri.Client on containerd; see
// cri.Client.EndStrandedTask).
type strandedTaskEnder interface {
	EndStrandedTask(ctx context.Context, id string) error
}

// removeContainer removes a container the pod is done with, also one the
// runtime refuses to remove (FailedPrecondition):
//   - one still running, though the journal has it exited (a start whose
//     reply was lost in a crash took effect after all): it is killed
//     (StopContainer with no grace), then removed;
//   - one the runtime reports EXITED whose task still exists (containerd,
//     a StartContainer cut by a crash inside its task creation): no CRI
//     call ends that task, so it is ended through the runtime's own task
//     service, then the container removed.
//
// It never starts anything, and ends nothing the pod still wants: the
// caller removes only containers the core has given up (RemoveContainer,
// RemoveSandbox).
func (a *containerActor) removeContainer(ctx context.Context, id string) error {
	rt := a.deps.Runtime
	err := rt.RemoveContainer(ctx, id)
	if cri.KindOf(err) != cri.FailedPrecondition {
		return err
	}
	if serr := rt.StopContainer(ctx, id, 0); serr != nil {
		return err
	}
	if err = rt.RemoveContainer(ctx, id); cri.KindOf(err) != cri.FailedPrecondition {
		return err
	}
	ender, ok := rt.(strandedTaskEnder)
	if !ok {
		return err
	}
	st, serr := rt.ContainerStatus(ctx, id)
	if serr != nil || st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		return err
	}
	a.deps.Logger.Warn("the runtime reports the container exited but will not remove it: ending its task",
		zap.String("pod", a.uid), zap.String("container", id), zap.String("reason", st.GetReason()),
		zap.String("message", st.GetMessage()), zap.Error(err))
	if eerr := ender.EndStrandedTask(ctx, id); eerr != nil {
		return errors.Join(err, eerr)
	}
	return rt.RemoveContainer(ctx, id)
}

// removeSandboxContainers removes every container of sandbox id (see
// removeContainer), for a sandbox the runtime will not remove.
func (a *containerActor) removeSandboxContainers(ctx context.Context, id string) error {
	list, err := a.deps.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: id})
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range list {
		if err := a.removeContainer(ctx, c.GetId()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// containerEnv resolves a container's environment (see podspec.ContainerEnv). The
// pod's IPs are the sandbox's, asked of the runtime only when a fieldRef
// wants them; a host-network pod's are the node's, as the kubelet gives.
// A failure is logged with the pod and container; the error's message is
// the kubelet's (it becomes the container's waiting message).
func (a *containerActor) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sandboxID string) (podspec.Env, error) {
	var hostIPs []string
	if a.deps.HostIP != "" {
		hostIPs = []string{a.deps.HostIP}
	}
	podIPs := func(ctx context.Context) ([]string, error) {
		if pod.Spec.HostNetwork {
			return hostIPs, nil
		}
		st, err := a.deps.Runtime.PodSandboxStatus(ctx, sandboxID)
		if err != nil {
			return nil, fmt.Errorf("sandbox %s status: %w", sandboxID, err)
		}
		var ips []string
		if ip := st.GetNetwork().GetIp(); ip != "" {
			ips = append(ips, ip)
		}
		for _, ip := range st.GetNetwork().GetAdditionalIps() {
			if ip.GetIp() != "" {
				ips = append(ips, ip.GetIp())
			}
		}
		return ips, nil
	}
	env, err := podspec.ContainerEnv(ctx, pod, c, podspec.EnvInputs{Source: a.deps.EnvSource, Services: a.deps.Services, PodIPs: podIPs, HostIPs: hostIPs, Allocatable: a.deps.Allocatable})
	log := a.deps.Logger.With(zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("uid", a.uid), zap.String("container", c.Name))
	if err != nil {
		log.Warn("container environment", zap.Error(err))
		return podspec.Env{}, &configError{err: err}
	}
	if len(env.Skipped) > 0 {
		log.Warn("envFrom keys skipped: not environment variable names", zap.Strings("keys", env.Skipped))
	}
	return env, nil
}

// configError is a pod or container config that cannot be built (a
// missing ConfigMap, Secret or key; an unreadable one; a bad fieldRef; a
// volume that cannot be set up or mounted). It is a
// definitive failure (cri.KindOf finds FailedPrecondition), so the core
// hears of it, shows CreateContainerConfigError and retries with a new
// attempt after its back-off, as the kubelet retries at each sync; unless
// its cause carries a runtime error's own kind (the sandbox's status could
// not be read), which keeps that kind. Its message is its cause's.
type configError struct{ err error }

func (e *configError) Error() string   { return e.err.Error() }
func (e *configError) Unwrap() []error { return []error{e.err, cri.ErrFailedPrecondition} }

// mkdirLogs creates a log directory (world-readable, as the kubelet's, for
// log shippers); "" is no directory.
func mkdirLogs(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	return nil
}

func fail(res *pb.EffectResult, reason string, err error) (*pb.EffectResult, error) {
	res.Failed = true
	res.Reason = reason
	res.Message = err.Error()
	res.ErrorKind = cri.KindOf(err).String()
	return res, err
}

// findSandbox returns the ID of the pod's sandbox with this attempt, if any;
// for a fresh request (see runEffect) there can be none and it asks nothing.
func (a *containerActor) findSandbox(ctx context.Context, fresh bool, attempt uint32) (string, error) {
	if fresh {
		return "", nil
	}
	list, err := a.deps.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: a.uid, cri.LabelManaged: cri.ManagedValue}})
	if err != nil {
		return "", err
	}
	for _, sb := range list {
		if sb.GetMetadata().GetAttempt() == attempt {
			return sb.Id, nil
		}
	}
	return "", nil
}

// findContainer returns the ID of the container with this name and attempt,
// if any; for a fresh request (see runEffect) there can be none.
func (a *containerActor) findContainer(ctx context.Context, fresh bool, sandboxID, name string, attempt uint32) (string, error) {
	if fresh {
		return "", nil
	}
	list, err := a.deps.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{
		PodSandboxId:  sandboxID,
		LabelSelector: map[string]string{cri.LabelPodUID: a.uid, cri.LabelContainerName: name, cri.LabelManaged: cri.ManagedValue}})
	if err != nil {
		return "", err
	}
	for _, c := range list {
		if c.GetMetadata().GetAttempt() == attempt {
			return c.Id, nil
		}
	}
	return "", nil
}

// ensureImage follows the container's imagePullPolicy and fills res: the
// image's ref, and for a pull its duration and size. The API event
// Pulling is asked for (Acting) only when the image is really pulled.
func (a *containerActor) ensureImage(ctx context.Context, pod *corev1.Pod, e lifecycle.PullImage, res *pb.EffectResult) error {
	spec := &runtimeapi.ImageSpec{Image: e.Image, UserSpecifiedImage: e.Image}
	if e.Policy != corev1.PullAlways {
		img, err := a.deps.Runtime.ImageStatus(ctx, spec)
		if err != nil {
			_, err = fail(res, "ErrImageInspect", err)
			return err
		}
		if img != nil {
			res.ImageRef, res.ImageSize = img.Id, img.GetSize()
			return nil
		}
		if e.Policy == corev1.PullNever {
			_, err = fail(res, "ErrImageNeverPull", fmt.Errorf("container image %q is not present with pull policy of Never", e.Image))
			return err
		}
	}
	if a.deps.Events != nil && pod != nil {
		a.deps.Events.Acting(pod, e)
	}
	start := a.deps.Clock.Now()
	ref, err := a.deps.Runtime.PullImage(ctx, spec, nil, nil)
	if err != nil {
		_, err = fail(res, "ErrImagePull", err)
		return err
	}
	res.ImageRef, res.PullNanos = ref, max(int64(a.deps.Clock.Since(start)), 1)
	if img, err := a.deps.Runtime.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: ref}); err == nil && img != nil {
		res.ImageSize = img.GetSize()
	}
	return nil
}

// specContainer is the spec of the pod's app, init or ephemeral container
// name (see podspec.SpecContainer).
func specContainer(pod *corev1.Pod, name string) *corev1.Container {
	c, _ := podspec.SpecContainer(pod, name)
	return c
}

// effectWorker names the ContainerActor that carries out an effect: the
// container's own, or the sandbox's.
func effectWorker(e lifecycle.Effect) string {
	switch e := e.(type) {
	case lifecycle.PullImage:
		return "c-" + e.Container
	case lifecycle.CreateContainer:
		return "c-" + e.Name
	case lifecycle.StartContainer:
		return "c-" + e.Name
	case lifecycle.StopContainer:
		return "c-" + e.Name
	case lifecycle.RemoveContainer:
		return "c-" + e.Name
	case lifecycle.UpdateContainerResources:
		return "c-" + e.Name
	case lifecycle.RunHook:
		return "hooks"
	default:
		return "sandbox"
	}
}

// minStopGrace is the least grace a container gets after its PreStop hook
// (the kubelet's minimumGracePeriodInSeconds).
const minStopGrace = 2 * time.Second

func postStart(l *corev1.Lifecycle) *corev1.LifecycleHandler { return l.PostStart }
func preStop(l *corev1.Lifecycle) *corev1.LifecycleHandler   { return l.PreStop }

// handler is the container's hook that pick selects, or nil (none, or no
// Hooks to run it).
func (a *containerActor) handler(m *runEffect, name string, pick func(*corev1.Lifecycle) *corev1.LifecycleHandler) *corev1.LifecycleHandler {
	spec := specContainer(m.pod, name)
	if a.deps.Hooks == nil || spec == nil || spec.Lifecycle == nil {
		return nil
	}
	return pick(spec.Lifecycle)
}

// runHook runs a hook of the container and returns the failure's message
// ("" when it ran fine).
func (a *containerActor) runHook(ctx context.Context, m *runEffect, name, id string, h *corev1.LifecycleHandler) string {
	if err := a.deps.Hooks.Hook(ctx, m.pod, specContainer(m.pod, name), id, m.podIP, h); err != nil {
		a.deps.Logger.Info("lifecycle hook failed", zap.String("pod", a.uid), zap.String("container", name), zap.Error(err))
		return err.Error()
	}
	return ""
}

// ReasonFailedMount is the reason of a sandbox whose volumes could not be
// set up (the kubelet's FailedMount event).
const ReasonFailedMount = "FailedMount"

// mounts are the container's CRI mounts: its volumeMounts (a subPathExpr
// expanded from env, the container's resolved environment), the file its
// termination message goes to, and the pod's /etc/hosts. Nil without
// Volumes.
func (a *containerActor) mounts(ctx context.Context, m *runEffect, c *corev1.Container, attempt uint32, env podspec.Env) ([]*runtimeapi.Mount, error) {
	if a.deps.Volumes == nil {
		return nil, nil
	}
	pod := m.pod
	var paths map[string]string
	if len(pod.Spec.Volumes) > 0 {
		var err error
		if paths, err = a.deps.Volumes.SetUp(ctx, pod); err != nil {
			return nil, &configError{err: err}
		}
	}
	mounts, err := podspec.ContainerMounts(pod, c, paths, env)
	if err != nil {
		return nil, &configError{err: err}
	}
	podDir := a.deps.Volumes.PodDir(string(pod.UID))
	_, tm, err := podspec.TerminationMessageFile(podDir, pod, c, attempt)
	if err != nil {
		return nil, &configError{err: err}
	}
	mounts = append(mounts, tm)
	read := a.deps.PodConfig.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	hosts, err := podspec.EtcHostsMount(podDir, pod, c, m.podIP, a.deps.PodConfig.ClusterDomain, read)
	if err != nil {
		return nil, &configError{err: err}
	}
	if hosts != nil {
		mounts = append(mounts, hosts)
	}
	return mounts, nil
}

// verifyNonRoot refuses a container that asks for runAsNonRoot and would
// run as root, from its own or its image's user (podspec.VerifyRunAsNonRoot),
// as the kubelet refuses it before creating it. The image's user is asked of
// the runtime only when the container has runAsNonRoot and no runAsUser.
func (a *containerActor) verifyNonRoot(ctx context.Context, pod *corev1.Pod, spec *corev1.Container) error {
	if !podspec.NeedsImageUser(pod, spec) {
		if err := podspec.VerifyRunAsNonRoot(pod, spec, nil, ""); err != nil {
			return &configError{err: err}
		}
		return nil
	}
	img, err := a.deps.Runtime.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: spec.Image})
	if err != nil {
		return fmt.Errorf("image status of %q: %w", spec.Image, err)
	}
	var uid *int64
	if v := img.GetUid(); v != nil {
		uid = &v.Value
	}
	if err := podspec.VerifyRunAsNonRoot(pod, spec, uid, img.GetUsername()); err != nil {
		return &configError{err: err} // definitive: not retried as a runtime failure
	}
	return nil
}
