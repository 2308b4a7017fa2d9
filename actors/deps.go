package actors

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/podspec"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Journal is what the actors need of the event journal.
type Journal interface {
	// Append returns once the events are durable, or with an error and nothing written.
	Append(ctx context.Context, podUID string, events ...*pb.Envelope) error
	SaveSnapshot(ctx context.Context, snap *pb.Snapshot) error
}

// Runtime is what the actors need of a CRI runtime (cri.Client satisfies it).
type Runtime interface {
	RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, id string) error
	RemovePodSandbox(ctx context.Context, id string) error
	PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error)
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, id string) error
	StopContainer(ctx context.Context, id string, gracePeriod time.Duration) error
	RemoveContainer(ctx context.Context, id string) error
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error)
	UpdateContainerResources(ctx context.Context, id string, linux *runtimeapi.LinuxContainerResources) error
	PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
	ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec) (*runtimeapi.Image, error)
}

// Lister lists what the runtime runs for one pod.
type Lister interface {
	ListPodObserved(ctx context.Context, podUID string) (*pb.RuntimeObserved, error)
}

// PodUpdate is a pod's status as its PodActor last decided it.
type PodUpdate struct {
	UID string
	// Pod is the pod as accepted (its Status field is empty); nil for a pod
	// without a spec (an orphan). It is shared with the PodActor's state,
	// which never mutates it: the receiver never changes it either (copy it
	// first).
	Pod *corev1.Pod
	// Status is the pod's status as the PodActor computed it; it belongs to
	// the receiver. Nil when Pod is.
	Status *corev1.PodStatus
	// View, when valid, is what Status was built from (View.Status()
	// gives it again): a receiver that keeps the status until the next
	// update keeps View instead, a few words shared with the PodActor's
	// state in place of a status built at every publish.
	View lifecycle.StatusView
	// Seq is the journal sequence the status reflects; it only goes up.
	Seq        uint64
	AcceptedAt time.Time
	// Removed: the pod is gone from the node; forget it.
	Removed bool
}

// StatusSink receives pod statuses. PodStatus is called from actor
// goroutines and must not block.
type StatusSink interface {
	PodStatus(u PodUpdate)
}

// Volumes are a node's pod volumes on the host (node/volumes implements
// it).
type Volumes interface {
	// SetUp makes the pod's volumes ready, idempotently, and returns their
	// host paths by volume name. Its error names each volume that failed.
	SetUp(ctx context.Context, pod *corev1.Pod) (map[string]string, error)
	// TearDown removes everything of the pod's (unmounting first).
	TearDown(ctx context.Context, podUID string) error
	// PodDir is the pod's directory (termination messages go there).
	PodDir(podUID string) string
}

// Deps are what the actors are built from.
type Deps struct {
	Journal Journal
	Runtime Runtime
	Lister  Lister
	Status  StatusSink
	// Events, when set, is told each pod's durable events (API events).
	Events EventSink
	// Admission, when set, judges pods new to the node (resources, pod
	// count); nil admits every pod.
	Admission Admitter
	// EnvSource, when set, reads the ConfigMaps and Secrets that container
	// environments refer to (valueFrom, envFrom). Nil is a node without an
	// API server: such a reference then fails the container's creation
	// with CreateContainerConfigError, unless it is optional.
	EnvSource podspec.EnvSource
	// Services, when set, lists the cluster's Services for the
	// service-link variables of container environments (nil: none, as a
	// node without an API server).
	Services podspec.ServiceLister
	// Volumes, when set, sets up the pods' volumes before their sandbox,
	// mounts them into containers, and removes them with the pod; with
	// termination messages. Nil: pods run without volumes.
	Volumes Volumes
	// Probers, when set, run containers' probes; nil runs none (a
	// container with a readiness probe then never becomes ready).
	Probers Probers
	// Hooks, when set, runs PostStart and PreStop hooks; nil runs none.
	Hooks Hooks
	// LifecycleHooks are the node's lifecycle hooks (user code), asked at
	// the stages Lifecycle.HookStages names (set it from
	// LifecycleHooks.Stages()).
	LifecycleHooks LifecycleHooks
	// Allocatable is the node's allocatable resources: a resourceFieldRef
	// to a cpu, memory or ephemeral-storage limit that a container does
	// not set reads it (nil: such a limit reads 0).
	Allocatable corev1.ResourceList

	Clock clock.WithTickerAndDelayedExecution
	// Epochs number the node's runtime listings and stamp effects'
	// outcomes (see cri.Epochs); nil numbers nothing, and views then
	// forget no object (the core cannot tell they are fresh).
	Epochs    *cri.Epochs
	Logger    *zap.Logger
	Lifecycle lifecycle.Config
	PodConfig podspec.Options
	// RuntimeName prefixes container IDs in statuses ("containerd://").
	RuntimeName string
	HostIP      string
	// SnapshotEvery: a pod's events are compacted into a snapshot after this many.
	SnapshotEvery int
	// RetryMin, RetryMax bound the back-off of transient runtime errors.
	RetryMin, RetryMax time.Duration
	// AppendHealth, when set, is told when a pod's appends start failing
	// and when they succeed again (/healthz).
	AppendHealth AppendHealth
	// Rebuilt, when set, is told of each pod rebuilt from the runtime
	// because its journal history was lost (metrics, API events).
	Rebuilt RebuildSink
	// Respawned, when set, is told of each PodActor that exhausted its
	// restarts and will be started again (metrics, API events).
	Respawned RespawnSink
	// RespawnMin, RespawnMax bound the back-off before such a PodActor is
	// started again (per pod, doubling; defaults 1 s and 5 min).
	RespawnMin, RespawnMax time.Duration
	// Fatal reports whether a journal error means the journal itself is
	// gone (closed, unusable): restarting pod actors cannot help then.
	Fatal func(error) bool
	// OnFatal is called (from the supervisor) with such an error; the node
	// should stop. Nil: only logged.
	OnFatal func(error)
	// Worker is told how long each input took a PodActor (nil: nobody).
	Worker WorkerObserver
	// Effects is told when ContainerActors start and end carrying out an
	// effect (nil: nobody).
	Effects EffectObserver
	// Mailbox, when set, sees every message posted to and handled by the
	// mailboxes of PodActors and ContainerActors (protoactor's mailbox
	// statistics): a queue depth gauge.
	Mailbox actor.MailboxMiddleware
	// mailboxOpts: mailbox() made once by withDefaults, shared by every
	// spawn (a Props keeps its mailbox producer as long as its actor runs).
	mailboxOpts []actor.PropsOption
	// driver: driverShared() made once by withDefaults, shared by every
	// pod's Driver (nil: each PodActor makes its own).
	driver *lifecycle.Shared
	// spawns hands the Supervisor's PodActors their pods (podSpawns); set
	// by NewSupervisorProps.
	spawns *podSpawns
	// TracerProvider, when set, traces the pods' syncs and effects
	// (tracing.go); nil traces nothing.
	TracerProvider trace.TracerProvider
}

// WorkerObserver is told, from a PodActor's goroutine, how long it took to
// handle one input: decide, journal, record and hand out the effects (the
// CRI calls run later, in ContainerActors). op is the kubelet's
// operation_type: "create" for a pod's first spec, "update" for a later
// one, "sync" for everything else. It must not block.
// Appended: one append of events to the pod's journal took took (waiting
// for the group commit's fsync included).
// EffectObserver is told, from a ContainerActor's goroutine, when it
// starts and when it ends carrying out an effect, whatever the outcome;
// kind is the first part of the effect's key ("runsandbox", "create",
// "start", "stop", "pull", ...). Both must be quick and must not block.
type EffectObserver interface {
	EffectStarted(kind string)
	EffectEnded(kind string)
}

// mailbox is the props option of a pod's actors: protoactor's unbounded
// lock-free mailbox, with d.Mailbox's statistics when set. Its user queue
// is a linked list that holds one node when empty (48 bytes in all), where
// protoactor's default mailbox keeps a ring of 10 slots (about 230 bytes)
// in every PodActor for as long as its pod runs; messages are handled in
// the same order.
func (d *Deps) mailbox() []actor.PropsOption {
	if d.mailboxOpts != nil {
		return d.mailboxOpts
	}
	if d.Mailbox == nil {
		return []actor.PropsOption{actor.WithMailbox(actor.UnboundedLockfree())}
	}
	return []actor.PropsOption{actor.WithMailbox(actor.UnboundedLockfree(d.Mailbox))}
}

type WorkerObserver interface {
	Synced(op string, took time.Duration)
	Appended(events int, took time.Duration)
}

func (d *Deps) withDefaults() {
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.SnapshotEvery == 0 {
		d.SnapshotEvery = 512
	}
	if d.RetryMin == 0 {
		d.RetryMin = 100 * time.Millisecond
	}
	if d.RetryMax == 0 {
		d.RetryMax = 10 * time.Second
	}
	if d.RespawnMin == 0 {
		d.RespawnMin = time.Second
	}
	if d.RespawnMax == 0 {
		d.RespawnMax = 5 * time.Minute
	}
	if d.Lifecycle.BackoffInitial == 0 {
		d.Lifecycle = lifecycle.DefaultConfig()
	}
	if d.mailboxOpts == nil {
		d.mailboxOpts = d.mailbox()
	}
	if d.driver == nil {
		d.driver = d.driverShared()
	}
}

// driverShared is what the pods' Drivers share (lifecycle.Shared): the
// core's Config and the back-off of failed effects and the snapshots.
func (d *Deps) driverShared() *lifecycle.Shared {
	return &lifecycle.Shared{Config: d.Lifecycle, Retry: lifecycle.Retry{Min: d.RetryMin, Max: d.RetryMax, Snapshot: d.SnapshotEvery}}
}
