package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/imagegc"
	"github.com/actorlet/actorlet/node/kubeletapi"
	"github.com/actorlet/actorlet/node/kubeletmetrics"
	"github.com/actorlet/actorlet/node/logrotate"
	"github.com/actorlet/actorlet/node/nodeactor"
	"github.com/actorlet/actorlet/node/stats"
	"github.com/actorlet/actorlet/node/volumes"
	"github.com/actorlet/actorlet/podspec"
)

// An Option sets one part of a node built by New. A node needs at least
// WithNodeName, WithRootDir and WithRuntime; every other part has a default
// (named at its option), and an option left out leaves that part off.
// Options apply in order: a later one of the same kind replaces (With...)
// or adds to (the handlers, hooks, sources and sinks) what an earlier set.
type Option func(*settings)

// settings are the parts and parameters the options gathered. They are
// resolved once, by New; the node never changes them.
type settings struct {
	nodeName    string
	rootDir     string
	journal     journal.Options
	runtime     *cri.Client
	runtimeName string
	logger      *zap.Logger
	clock       clock.WithTickerAndDelayedExecution

	lifecycle        lifecycle.Config
	podConfig        podspec.Options
	hostIP           string
	relistPeriod     time.Duration
	eventedRelist    time.Duration
	removedRetention time.Duration
	volumeRefresh    time.Duration
	stopTimeout      time.Duration

	// Pod sources and sinks.
	pods         map[string][]*corev1.Pod
	manifestDir  string
	fileCheck    time.Duration
	sources      []PodSource
	statusSinks  []actors.StatusSink
	events       actors.EventSink
	eventHandler []EventHandler

	// Decisions and their parts.
	admitters      []actors.Admitter
	lifecycleHooks []actors.LifecycleHook
	volumes        Volumes
	volumePlugins  map[string]volumes.Plugin
	probers        actors.Probers
	hooks          actors.Hooks

	// What a pod reads from its cluster.
	envSource   podspec.EnvSource
	services    podspec.ServiceLister
	tokens      volumes.TokenRequester
	allocatable corev1.ResourceList

	// The node's own services.
	kubeletAPI      *kubeletapi.Options
	nodeActor       *nodeactor.Config
	logRotation     *logrotate.Policy
	eviction        *eviction.Config
	evictionPeriod  time.Duration
	evictionOptions []eviction.Option
	statsFS         stats.FS
	imageGC         *imagegc.Policy
	imageGCOptions  []imagegc.Option

	// Observability.
	registerer     prometheus.Registerer
	metrics        *kubeletmetrics.Metrics
	actorOptions   []actor.ConfigOption
	actorSystem    *actor.ActorSystem
	tracerProvider trace.TracerProvider
}

// resolve applies opts over the defaults and checks that the node can be
// built: it names each required option that is missing.
func resolve(opts []Option) (*settings, error) {
	s := &settings{
		logger:           zap.NewNop(),
		clock:            clock.RealClock{},
		lifecycle:        lifecycle.DefaultConfig(),
		hostIP:           "127.0.0.1",
		removedRetention: time.Hour,
		volumeRefresh:    time.Minute,
		stopTimeout:      time.Minute,
	}
	for _, o := range opts {
		o(s)
	}
	var errs []error
	if s.nodeName == "" {
		errs = append(errs, errors.New("no node name (WithNodeName)"))
	}
	if s.rootDir == "" {
		errs = append(errs, errors.New("no root dir (WithRootDir)"))
	}
	if s.runtime == nil {
		errs = append(errs, errors.New("no container runtime (WithRuntime)"))
	}
	if s.volumes != nil && len(s.volumePlugins) > 0 {
		errs = append(errs, errors.New("volume plugins (WithVolumePlugin) need the built-in volume manager, which WithVolumes replaced"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	s.lifecycle.HookStages |= actors.LifecycleHooks(s.lifecycleHooks).Stages()
	if s.lifecycle.Allocatable == nil {
		s.lifecycle.Allocatable = s.allocatable
	}
	return s, nil
}

// WithNodeName names the node (required).
func WithNodeName(name string) Option { return func(s *settings) { s.nodeName = name } }

// WithRootDir is the node's directory (required): the journal
// (journal.db), its socket, and the pods' volumes under pods/.
func WithRootDir(dir string) Option { return func(s *settings) { s.rootDir = dir } }

// WithJournalOptions are the journal's options (default: its zero value,
// every commit fsynced); the node's logger is its logger unless o names
// one. journal.Options.NoSync is for nodes whose journal lives no longer
// than their process (actorlet fleet --journal memory).
func WithJournalOptions(o journal.Options) Option { return func(s *settings) { s.journal = o } }

// WithRuntime is the connected CRI runtime the node drives (required); name
// prefixes the container IDs in pod statuses ("<name>://<id>", the
// RuntimeName of CRI Version). Any CRI v1 endpoint (cri.New), or a runtime
// in the process (serve.InProcess and cri.NewFromConn). The node does not
// close it.
func WithRuntime(client *cri.Client, name string) Option {
	return func(s *settings) { s.runtime, s.runtimeName = client, name }
}

// WithLogger is the node's logger (default, and for nil: none).
func WithLogger(l *zap.Logger) Option {
	return func(s *settings) {
		if l == nil {
			l = zap.NewNop()
		}
		s.logger = l
	}
}

// WithClock is the clock of the pods' timers, back-offs, probes and
// statuses (default: the real one).
func WithClock(c clock.WithTickerAndDelayedExecution) Option {
	return func(s *settings) { s.clock = c }
}

// WithLifecycle sets the pure core's parameters (default
// lifecycle.DefaultConfig(): back-offs, grace periods, dead containers kept).
func WithLifecycle(c lifecycle.Config) Option { return func(s *settings) { s.lifecycle = c } }

// WithPodConfig is how pod specs become CRI configs: the container logs'
// directory, DNS, cgroups, the node's memory for OOM scores (see
// podspec.Options; default: its zero value).
func WithPodConfig(o podspec.Options) Option { return func(s *settings) { s.podConfig = o } }

// WithHostIP is the node's IP: pods' status.hostIP and hostNetwork pods' IP
// (default 127.0.0.1).
func WithHostIP(ip string) Option { return func(s *settings) { s.hostIP = ip } }

// WithRelistPeriod is how often the runtime is listed in full besides its
// container events (default cri.WatchOptions' own).
func WithRelistPeriod(d time.Duration) Option { return func(s *settings) { s.relistPeriod = d } }

// WithEventedRelistPeriod is how often the runtime is listed in full while
// it serves container events: the safety net for an event lost (default
// cri.DefaultEventedRelistPeriod). The upstream kubelet's generic PLEG
// lists every 300s beside its Evented PLEG.
func WithEventedRelistPeriod(d time.Duration) Option {
	return func(s *settings) { s.eventedRelist = d }
}

// WithRemovedRetention is how long the journal keeps a removed pod's final
// snapshot (for `actorlet journal`) before the running node's compaction,
// or recovery, deletes it (default 1h).
func WithRemovedRetention(d time.Duration) Option {
	return func(s *settings) { s.removedRetention = d }
}

// WithVolumeRefreshPeriod is how often running pods' ConfigMap, Secret,
// downward API and token volumes are rewritten with what changed, and
// orphaned pod directories removed (default 1m).
func WithVolumeRefreshPeriod(d time.Duration) Option {
	return func(s *settings) { s.volumeRefresh = d }
}

// WithStopTimeout bounds how long Run waits for the actors to stop once its
// context ends (default 1m).
func WithStopTimeout(d time.Duration) Option { return func(s *settings) { s.stopTimeout = d } }

// WithPods makes pods the first desired set of the embedded source named
// source (later sets come from Agent.SetPods). Recovery takes down the
// journaled pods that no source wants, so an embedder that restarts a node
// passes its pods here.
func WithPods(source string, pods []*corev1.Pod) Option {
	return func(s *settings) {
		if s.pods == nil {
			s.pods = map[string][]*corev1.Pod{}
		}
		s.pods[source] = pods
	}
}

// WithManifestDir runs the static pods of dir (source "file"), read again
// every checkEvery.
func WithManifestDir(dir string, checkEvery time.Duration) Option {
	return func(s *settings) { s.manifestDir, s.fileCheck = dir, checkEvery }
}

// WithSource adds a pod source (the API server's pods, say); see PodSource.
func WithSource(src PodSource) Option {
	return func(s *settings) { s.sources = append(s.sources, src) }
}

// WithStatusSink adds a sink of every pod status besides the node's own
// cache (the API status writer). Sinks share each PodUpdate: none may
// change it, and none may block.
func WithStatusSink(sink actors.StatusSink) Option {
	return func(s *settings) { s.statusSinks = append(s.statusSinks, sink) }
}

// WithEventSink gets each pod's journaled events once they are durable (the
// API event recorder).
func WithEventSink(sink actors.EventSink) Option { return func(s *settings) { s.events = sink } }

// WithEventHandler adds a handler of every journaled event of the node,
// from its own cursor, on its own goroutine (see EventHandler).
func WithEventHandler(h EventHandler) Option {
	return func(s *settings) { s.eventHandler = append(s.eventHandler, h) }
}

// WithAdmitHandler adds an admit handler. Handlers are asked in the order
// given for each pod new to the node: it runs only if all admit it, and
// the first rejection wins (see actors.Admitters). Give the built-in ones
// (sysctls, then resources) first, as the kubelet orders its own.
func WithAdmitHandler(h actors.Admitter) Option {
	return func(s *settings) {
		if h != nil {
			s.admitters = append(s.admitters, h)
		}
	}
}

// WithLifecycleHook adds a hook asked at the stages of a pod's life it
// names, in order with the others; it may delay or veto each step (see
// actors.LifecycleHook and lifecycle.Stage).
func WithLifecycleHook(h actors.LifecycleHook) Option {
	return func(s *settings) { s.lifecycleHooks = append(s.lifecycleHooks, h) }
}

// WithVolumePlugin serves the pods' CSI ephemeral inline volumes
// (volumes[].csi) of driver in process (see volumes.Plugin for when SetUp,
// Refresh and TearDown are called).
func WithVolumePlugin(driver string, p volumes.Plugin) Option {
	return func(s *settings) {
		if s.volumePlugins == nil {
			s.volumePlugins = map[string]volumes.Plugin{}
		}
		s.volumePlugins[driver] = p
	}
}

// Volumes are what the node needs of a volume manager: the actors' part
// (set up before the sandbox, torn down once the pod is gone) and the
// node's upkeep (refresh of running pods' volumes, orphaned directories).
// *volumes.Manager is the built-in one.
type Volumes interface {
	actors.Volumes
	// Refresh rewrites the pod's projected content that changed. pod is
	// the node's own copy, shared: read only, and without its status.
	Refresh(ctx context.Context, pod *corev1.Pod) error
	// PodDirs lists the UIDs that have a pod directory.
	PodDirs(ctx context.Context) ([]string, error)
}

// WithVolumes replaces the built-in volume manager (emptyDir, hostPath,
// configMap, secret, downwardAPI, projected, CSI inline through plugins).
func WithVolumes(v Volumes) Option { return func(s *settings) { s.volumes = v } }

// WithProbes replaces how probes and container lifecycle handlers run
// (default: exec through the runtime; httpGet, tcpSocket and grpc straight
// to the pod's IP; see package probe).
func WithProbes(p actors.Probers, h actors.Hooks) Option {
	return func(s *settings) { s.probers, s.hooks = p, h }
}

// WithEnvSource reads the ConfigMaps and Secrets container environments and
// volumes refer to (default none: such references fail unless optional).
func WithEnvSource(e podspec.EnvSource) Option { return func(s *settings) { s.envSource = e } }

// WithServices lists the cluster's Services for the containers' service-link
// variables (default none).
func WithServices(l podspec.ServiceLister) Option { return func(s *settings) { s.services = l } }

// WithTokens requests service account tokens for projected volumes (default
// none: such volumes fail to mount).
func WithTokens(t volumes.TokenRequester) Option { return func(s *settings) { s.tokens = t } }

// WithAllocatable is the node's allocatable resources: what a
// resourceFieldRef to a missing limit reads and what an in-place resize
// must fit.
func WithAllocatable(r corev1.ResourceList) Option { return func(s *settings) { s.allocatable = r } }

// WithKubeletAPI serves the authenticated kubelet API (see package
// kubeletapi; the node fills in its data providers), and the Node
// advertises its port.
func WithKubeletAPI(o kubeletapi.Options) Option { return func(s *settings) { s.kubeletAPI = &o } }

// WithNodeActor registers the node with the API server, reports its status
// and renews its Lease (see package nodeactor).
func WithNodeActor(c nodeactor.Config) Option { return func(s *settings) { s.nodeActor = &c } }

// WithLogRotation rotates container logs by p (see package logrotate).
func WithLogRotation(p logrotate.Policy) Option { return func(s *settings) { s.logRotation = &p } }

// WithEviction evicts pods under node pressure every period (0: 10s) and
// gives the NodeActor the pressure conditions (see package eviction).
func WithEviction(c eviction.Config, period time.Duration, opts ...eviction.Option) Option {
	return func(s *settings) { s.eviction, s.evictionPeriod, s.evictionOptions = &c, period, opts }
}

// WithStatsFS is where node stats are read (default: the host's /proc and
// cgroups; see package stats).
func WithStatsFS(fs stats.FS) Option { return func(s *settings) { s.statsFS = fs } }

// WithImageGC removes unused images by p (see package imagegc).
func WithImageGC(p imagegc.Policy, opts ...imagegc.Option) Option {
	return func(s *settings) { s.imageGC, s.imageGCOptions = &p, opts }
}

// WithMetrics registers the node's metrics on reg; km are the kubelet's
// metric families when the caller made them already (to give the runtime's
// connection their observer), nil to make them here.
func WithMetrics(reg prometheus.Registerer, km *kubeletmetrics.Metrics) Option {
	return func(s *settings) { s.registerer, s.metrics = reg, km }
}

// WithActorOptions configure the actor system (its logging).
func WithActorOptions(o ...actor.ConfigOption) Option {
	return func(s *settings) { s.actorOptions = append(s.actorOptions, o...) }
}

// WithActorSystem runs the node's actors in sys, an actor system the
// caller owns and may share with other nodes (a fleet's nodes share one:
// making a protoactor system allocates its process registry, 1,024
// concurrent maps, most of a node's start-up CPU). The node names its
// actors "<node name>/supervisor" and "<node name>/node", stops them when
// it stops, and leaves sys running; WithActorOptions does not apply. Without
// it, the node makes a system of its own (with a small registry) and shuts
// it down when it stops.
func WithActorSystem(sys *actor.ActorSystem) Option { return func(s *settings) { s.actorSystem = sys } }

// WithTracing traces the pods' syncs and effects (see package
// node/tracing); the CRI calls are traced by the runtime's connection.
func WithTracing(tp trace.TracerProvider) Option { return func(s *settings) { s.tracerProvider = tp } }

var _ Volumes = (*volumes.Manager)(nil)
