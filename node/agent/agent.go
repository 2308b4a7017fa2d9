// Package agent assembles one actorlet node: journal, actors, runtime
// watcher and pod sources. cmd/actorlet runs one; simulation harnesses embed
// many in one process, each with its own root dir and runtime.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
	"github.com/actorlet/actorlet/node/podevents"
	"github.com/actorlet/actorlet/node/podstatus"
	"github.com/actorlet/actorlet/node/probe"
	"github.com/actorlet/actorlet/node/staticpod"
	"github.com/actorlet/actorlet/node/stats"
	"github.com/actorlet/actorlet/node/volumes"
	"github.com/actorlet/actorlet/podspec"
)

// Config is one node's configuration.
type Config struct {
	NodeName string
	// RootDir holds the journal (RootDir/journal.db).
	RootDir string
	// Runtime is the connected CRI runtime; the agent does not close it.
	Runtime *cri.Client
	// RuntimeName prefixes container IDs in pod statuses (from CRI Version).
	RuntimeName string
	// ManifestDir is the static pod directory ("" for none).
	ManifestDir        string
	FileCheckFrequency time.Duration
	PodLogsDir         string
	Lifecycle          lifecycle.Config
	RelistPeriod       time.Duration
	HostIP             string
	Logger             *zap.Logger
	// ClusterDNS, ClusterDomain and ResolvConf shape pods' DNS (see
	// podspec.Options): the cluster DNS server IPs, the cluster's
	// domain, the host resolv.conf ("" = none).
	ClusterDNS    []string
	ClusterDomain string
	ResolvConf    string
	// CgroupsPerQOS and CgroupRoot put each pod in a cgroup under its QoS
	// class's (see podspec.PodCgroupParent; cgroupfs driver).
	CgroupsPerQOS bool
	CgroupRoot    string
	// MemoryCapacity is the node's memory in bytes: Burstable containers'
	// oom_score_adj is scaled by it (0: unknown, they get 999).
	MemoryCapacity int64
	// Registerer gets the pod and journal metrics (nil: not registered).
	Registerer prometheus.Registerer
	// Metrics are the kubelet's metric families, made by the caller when it
	// gave Runtime their Observer (nil: made here on Registerer).
	Metrics *kubeletmetrics.Metrics
	// ActorOptions configure the actor system (logging).
	ActorOptions []actor.ConfigOption
	// RemovedRetention is how long the journal keeps a removed pod's final
	// snapshot (for `actorlet journal`) before recovery, or the running
	// node's periodic compaction (compaction.go), deletes it (default 1h).
	RemovedRetention time.Duration
	// Pods are the first desired sets of embedded sources (see SetPods), by
	// source name. Recovery takes down journaled pods that no source wants,
	// so an embedder that restarts a node passes its pods here.
	Pods map[string][]*corev1.Pod
	// Sources are further pod sources (the API server's pods); see PodSource.
	Sources []PodSource
	// StatusSinks get every pod status besides the agent's own cache (the
	// API status writer). They share each PodUpdate: none may change it.
	StatusSinks []actors.StatusSink
	// Events, when set, gets each pod's journaled events once they are
	// durable (the API event recorder).
	Events actors.EventSink
	// Admission, when set, decides whether a new pod fits the node.
	Admission actors.Admitter
	// AdmitHandlers are further admit handlers (user code), asked after
	// Admission, in order: a pod runs only if all admit it, and the first
	// rejection wins (see actors.Admitters).
	AdmitHandlers []actors.Admitter
	// LifecycleHooks are asked at the stages of a pod's life they name,
	// in order, and may delay or veto each step (see actors.LifecycleHook
	// and lifecycle.Stage).
	LifecycleHooks []actors.LifecycleHook
	// VolumePlugins serve pods' CSI ephemeral inline volumes
	// (volumes[].csi) in process, by driver name (see volumes.Plugin for
	// when SetUp, Refresh and TearDown are called).
	VolumePlugins map[string]volumes.Plugin
	// EventHandlers get every journaled event of the node from their own
	// cursors, each on its own goroutine (see EventHandler).
	EventHandlers []EventHandler
	// EnvSource, when set, reads the ConfigMaps and Secrets container
	// environments refer to (nil: such references fail unless optional).
	EnvSource podspec.EnvSource
	// Services, when set, lists the cluster's Services for the containers'
	// service-link variables (nil: none).
	Services podspec.ServiceLister
	// Allocatable is the node's allocatable resources, what a
	// resourceFieldRef to a missing limit reads and what an in-place resize
	// must fit (lifecycle.Config.Allocatable, unless set there).
	Allocatable corev1.ResourceList
	// Tokens request service account tokens for projected volumes (nil:
	// such volumes fail to mount).
	Tokens volumes.TokenRequester
	// VolumeRefreshPeriod is how often running pods' ConfigMap, Secret,
	// downward API and token volumes are rewritten with what changed, and
	// orphaned pod directories removed (default 1m).
	VolumeRefreshPeriod time.Duration
	// KubeletAPI, when set, serves the authenticated kubelet API (see
	// package kubeletapi; the agent fills in its data providers) and the
	// Node advertises its port.
	KubeletAPI *kubeletapi.Options
	// LogRotation, when set, rotates container logs by its policy (see
	// package logrotate).
	LogRotation *logrotate.Policy
	// Eviction, when set, evicts pods under node pressure every
	// EvictionPeriod (default 10s) and gives the NodeActor the pressure
	// conditions (see package eviction).
	Eviction       *eviction.Config
	EvictionPeriod time.Duration
	// EvictionOptions are more options of the eviction manager (a clock).
	EvictionOptions []eviction.Option
	// StatsFS is where node stats are read (nil: the host's /proc and
	// cgroups; see package stats).
	StatsFS stats.FS
	// ImageGC, when set, removes unused images by its policy (see package
	// imagegc), with ImageGCOptions (the sandbox image, events, a fixed
	// capacity for a simulated runtime).
	ImageGC        *imagegc.Policy
	ImageGCOptions []imagegc.Option
	// NodeActor, when set, registers the node with the API server, reports
	// its status and renews its Lease (see package nodeactor).
	NodeActor *nodeactor.Config
	// TracerProvider, when set, traces the pods' syncs and effects (see
	// package node/tracing); the CRI calls are traced by Runtime's
	// connection (cri.Options.TracerProvider). Nil traces nothing.
	TracerProvider trace.TracerProvider
}

// Agent is a running node. Its methods are safe for concurrent use.
type Agent struct {
	cfg      Config
	stats    *stats.Provider
	api      *kubeletapi.Server
	eviction *eviction.Manager
	log      *zap.Logger
	journal  *journal.Journal
	// journalHealth tracks the pods whose appends fail (JournalHealth).
	journalHealth *journalHealth
	statuses      *podstatus.Cache
	system        *actor.ActorSystem
	sup           *actor.PID
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	recovery      time.Duration
	sources       *sourceForwarder
	fatal         chan error
}

// Start opens the journal, recovers (journal, runtime, sources) and starts
// the actors. It returns once every recovered pod has its actor.
func Start(ctx context.Context, cfg Config) (*Agent, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Lifecycle.BackoffInitial == 0 {
		cfg.Lifecycle = lifecycle.DefaultConfig()
	}
	cfg.Lifecycle.HookStages |= actors.LifecycleHooks(cfg.LifecycleHooks).Stages()
	if cfg.Lifecycle.Allocatable == nil {
		cfg.Lifecycle.Allocatable = cfg.Allocatable
	}
	if cfg.HostIP == "" {
		cfg.HostIP = "127.0.0.1"
	}
	if cfg.RemovedRetention == 0 {
		cfg.RemovedRetention = time.Hour
	}
	if cfg.VolumeRefreshPeriod == 0 {
		cfg.VolumeRefreshPeriod = time.Minute
	}
	log := cfg.Logger
	if err := os.MkdirAll(cfg.RootDir, 0o700); err != nil {
		return nil, fmt.Errorf("root dir: %w", err)
	}
	j, err := journal.Open(ctx, cfg.RootDir, journal.Options{Logger: log.Named("journal")})
	if err != nil {
		return nil, err
	}
	if q := j.Quarantined(); q != nil {
		log.Error("THE JOURNAL WAS CORRUPT AND HAS BEEN QUARANTINED; starting from the runtime and the pod sources", zap.Error(q))
	}
	a := &Agent{cfg: cfg, log: log, journal: j, sources: newSourceForwarder(log.Named("sources")), fatal: make(chan error, 1)}
	reg := cfg.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	a.statuses = podstatus.New(reg, clock.RealClock{})
	if err := reg.Register(newJournalCollector(j)); err != nil {
		j.Close()
		return nil, err
	}
	a.journalHealth = newJournalHealth(j.Path())
	rebuilt, err := newRebuiltReporter(reg, cfg.Events)
	if err != nil {
		j.Close()
		return nil, err
	}
	respawned, err := newRespawnReporter(reg, cfg.Events)
	if err != nil {
		j.Close()
		return nil, err
	}
	km := cfg.Metrics
	if km == nil {
		if km, err = kubeletmetrics.New(reg); err != nil {
			j.Close()
			return nil, err
		}
	}
	km.SetNodeName(cfg.NodeName)
	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	fail := func(err error) (*Agent, error) {
		cancel()
		a.wg.Wait()
		j.Close()
		return nil, err
	}

	start := time.Now()
	// The runtime watcher subscribes to the runtime's events before the
	// recovery lists it: that listing is then the watcher's first, and
	// the events tell what changed after it (a runtime without events is
	// listed again by the watcher, as before).
	events, err := cri.Subscribe(runCtx, cfg.Runtime)
	if err != nil {
		log.Debug("runtime events not subscribed before the recovery listing; the watcher lists again", zap.Error(err))
	}
	rec, views, err := recoverState(ctx, j, cfg.Runtime, cfg.RemovedRetention, log)
	if err != nil {
		return fail(err)
	}
	for name, pods := range cfg.Pods {
		rec.Sources = append(rec.Sources, actors.SourceSnapshot{Source: name, Pods: pods})
	}
	if cfg.ManifestDir != "" {
		src, err := staticpod.New(staticpod.Options{Dir: cfg.ManifestDir, NodeName: cfg.NodeName,
			ResyncPeriod: cfg.FileCheckFrequency, Logger: log.Named("staticpod")})
		if err != nil {
			return fail(err)
		}
		first, err := a.sources.run(runCtx, &a.wg, "file", src.Run)
		if err != nil {
			return fail(fmt.Errorf("static pods in %s: %w", cfg.ManifestDir, err))
		}
		rec.Sources = append(rec.Sources, first)
	}
	for _, src := range cfg.Sources {
		rec.Pending = append(rec.Pending, src.Name)
	}
	var status actors.StatusSink = a.statuses
	if len(cfg.StatusSinks) > 0 {
		status = actors.StatusSinks(append([]actors.StatusSink{a.statuses}, cfg.StatusSinks...))
	}
	root, err := filepath.Abs(cfg.RootDir)
	if err != nil {
		return fail(fmt.Errorf("root dir: %w", err))
	}
	vols, err := volumes.New(volumes.Options{RootDir: root, Source: cfg.EnvSource, Tokens: cfg.Tokens,
		Allocatable: cfg.Allocatable, Plugins: cfg.VolumePlugins, Observer: km, Logger: log.Named("volumes")})
	if err != nil {
		return fail(err)
	}
	// Probes and hooks run through the runtime (exec) or straight to the
	// pod's IP (httpGet, tcpSocket, grpc).
	runner := &probe.Runner{Exec: cfg.Runtime}
	prober := probe.ForActors{Runner: runner, Prober: kubeletmetrics.CountedProber{Prober: runner, Metrics: km}}
	deps := actors.Deps{
		Probers: prober, Hooks: prober, Volumes: vols,
		Journal: j, Runtime: cfg.Runtime, Lister: actors.CRILister{Client: cfg.Runtime}, Status: status,
		Events: actors.EventSinks{cfg.Events, km, podevents.NewLog(log.Named("pod"))}, Rebuilt: rebuilt, Respawned: respawned, AppendHealth: a.journalHealth, Admission: actors.JoinAdmitters(cfg.Admission, cfg.AdmitHandlers...), EnvSource: cfg.EnvSource, Services: cfg.Services, Allocatable: cfg.Allocatable,
		Clock: clock.RealClock{}, Logger: log.Named("pod"), Lifecycle: cfg.Lifecycle,
		RuntimeName: cfg.RuntimeName, HostIP: cfg.HostIP, TracerProvider: cfg.TracerProvider,
		PodConfig: podspec.Options{PodLogsDir: cfg.PodLogsDir, ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain, ResolvConf: cfg.ResolvConf,
			MemoryCapacity: cfg.MemoryCapacity, CgroupsPerQOS: cfg.CgroupsPerQOS, CgroupRoot: cfg.CgroupRoot},
		Worker: km, Effects: km, Mailbox: km,
		Fatal: func(err error) bool { return errors.Is(err, journal.ErrClosed) },
		OnFatal: func(err error) {
			select {
			case a.fatal <- err:
			default:
			}
		},
	}
	deps.LifecycleHooks = cfg.LifecycleHooks
	a.system = actor.NewActorSystem(cfg.ActorOptions...)
	a.sup, err = a.system.Root.SpawnNamed(actors.NewSupervisorProps(runCtx, deps, loader(j), rec), "supervisor")
	if err != nil {
		return fail(fmt.Errorf("start supervisor: %w", err))
	}
	// The supervisor's Started handler spawned every recovered pod once
	// this answers.
	if _, err := a.system.Root.RequestFuture(a.sup, &actors.ActivePods{}, time.Minute).Result(); err != nil {
		return fail(fmt.Errorf("start supervisor: %w", err))
	}
	if a.stats, err = stats.New(cfg.Runtime, stats.Options{NodeName: cfg.NodeName, RootDir: root, PodLogsDir: cfg.PodLogsDir,
		FS: cfg.StatsFS, Logger: log.Named("stats")}); err != nil {
		return fail(err)
	}
	var gc *imagegc.Manager
	if cfg.ImageGC != nil {
		if gc, err = imagegc.New(cfg.Runtime, *cfg.ImageGC, append([]imagegc.Option{imagegc.WithLogger(log.Named("imagegc"))}, cfg.ImageGCOptions...)...); err != nil {
			return fail(fmt.Errorf("image garbage collection: %w", err))
		}
	}
	if cfg.Eviction != nil {
		opts := append([]eviction.Option{eviction.WithLogger(log.Named("eviction"))}, cfg.EvictionOptions...)
		if cfg.EvictionPeriod > 0 {
			opts = append(opts, eviction.WithPeriod(cfg.EvictionPeriod))
		}
		if gc != nil {
			opts = append(opts, eviction.WithReclaimer(imageReclaimer{gc: gc}))
		}
		opts = append(opts, eviction.WithOnEvicted(km.Evicted))
		if a.eviction, err = eviction.New(*cfg.Eviction, a.stats, a.evictionPods, a.evict, opts...); err != nil {
			return fail(fmt.Errorf("eviction: %w", err))
		}
	}
	var apiPort int32
	if cfg.KubeletAPI != nil {
		if apiPort, err = a.startKubeletAPI(runCtx, *cfg.KubeletAPI); err != nil {
			return fail(fmt.Errorf("kubelet API: %w", err))
		}
	}
	if cfg.NodeActor != nil {
		nc := *cfg.NodeActor
		if apiPort != 0 {
			nc.Machine.Port = apiPort
		}
		if a.eviction != nil {
			nc.Pressure = a.eviction.Conditions
		}
		if _, err := a.system.Root.SpawnNamed(nodeactor.Props(nc), "node"); err != nil {
			return fail(fmt.Errorf("start node actor: %w", err))
		}
	}
	a.recovery = time.Since(start)
	log.Info("recovered", zap.Duration("took", a.recovery), zap.Int("journaled", len(rec.States)), zap.Int("runtime", len(rec.Views)))

	for _, src := range cfg.Sources {
		a.sources.start(runCtx, &a.wg, src, func(err error) {
			log.Error("pod source stopped", zap.String("source", src.Name), zap.Error(err))
		})
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.volumeUpkeep(runCtx, vols, cfg.VolumeRefreshPeriod)
	}()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		compactRemovedLoop(runCtx, j, cfg.RemovedRetention, log.Named("journal"))
	}()
	// `actorlet journal` reads the running node's journal through this
	// socket (the file itself is locked).
	if l, err := journal.Listen(cfg.RootDir); err != nil {
		log.Warn("the journal socket is not served; `actorlet journal` works only while the node is stopped", zap.Error(err))
	} else {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := j.Serve(runCtx, l); err != nil {
				log.Warn("journal socket stopped", zap.Error(err))
			}
		}()
	}
	for _, h := range cfg.EventHandlers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			runEventHandler(runCtx, j, h, log.Named("events"))
		}()
	}
	if gc != nil {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			gc.Run(runCtx)
		}()
	}
	if a.eviction != nil {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.eviction.Run(runCtx)
		}()
	}
	if cfg.LogRotation != nil && cfg.LogRotation.Enabled() {
		lr, err := logrotate.New(cfg.Runtime, *cfg.LogRotation, logrotate.WithLogger(log.Named("logrotate")))
		if err != nil {
			return fail(fmt.Errorf("log rotation: %w", err))
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			lr.Run(runCtx)
		}()
	}
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		a.sources.forward(runCtx, func(s *actors.SourceSnapshot) { a.system.Root.Send(a.sup, s) })
	}()
	go func() {
		defer a.wg.Done()
		w := cri.NewWatcher(cfg.Runtime, cri.WatchOptions{RelistPeriod: cfg.RelistPeriod, Logger: log.Named("watch"), Initial: views,
			Subscription: events, Relisted: km.Relisted})
		w.Run(runCtx, func(v *cri.PodView) { a.system.Root.Send(a.sup, actors.Observed(v.UID, v)) })
	}()
	return a, nil
}

// Fatal delivers the error that made the node unable to go on (its journal
// is gone). The embedder should stop the node.
func (a *Agent) Fatal() <-chan error { return a.fatal }

// JournalHealth is nil while the journal takes every append; otherwise it
// names the journal and the failure (pods wait and retry meanwhile). Health
// checks (/healthz) report it.
func (a *Agent) JournalHealth() error { return a.journalHealth.Err() }

// RecoveryTime is how long Start took to replay the journal, list the
// runtime and start every recovered pod's actor.
func (a *Agent) RecoveryTime() time.Duration { return a.recovery }

// Statuses is the node's view of its pods' statuses.
func (a *Agent) Statuses() *podstatus.Cache { return a.statuses }

// Stats is the node's stats provider (the Summary API).
func (a *Agent) Stats() *stats.Provider { return a.stats }

// Eviction is the node's eviction manager (nil when eviction is off).
func (a *Agent) Eviction() *eviction.Manager { return a.eviction }

// Journal is the node's journal.
func (a *Agent) Journal() *journal.Journal { return a.journal }

// SetPods makes pods the whole desired set of the named source (an embedded
// source, like the static files are one). Each pod needs a UID.
func (a *Agent) SetPods(source string, pods []*corev1.Pod) {
	a.system.Root.Send(a.sup, &actors.SourceSnapshot{Source: source, Pods: pods})
}

// ActivePods returns the UIDs the node runs actors for.
func (a *Agent) ActivePods(ctx context.Context) ([]string, error) {
	res, err := a.system.Root.RequestFuture(a.sup, &actors.ActivePods{}, time.Minute).Result()
	if err != nil {
		return nil, err
	}
	return res.([]string), nil
}

// Stop stops the node's actors and closes its journal. Pods keep running in
// the runtime; a new Agent on the same root dir takes them over. The CRI
// calls in flight are cancelled first (the actors run on the Agent's
// context), so their effects stay outstanding in the journal for the next
// start; Stop waits for the actors until ctx is done.
func (a *Agent) Stop(ctx context.Context) error {
	a.cancel()
	a.wg.Wait()
	var errs []error
	if a.api != nil {
		if err := a.api.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the kubelet API: %w", err))
		}
	}
	if err := a.stopSupervisor(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop supervisor: %w", err))
	}
	a.system.Shutdown()
	errs = append(errs, a.journal.Close())
	return errors.Join(errs...)
}

// stopSupervisor stops the Supervisor (and so every pod actor) and waits for
// it to be gone.
func (a *Agent) stopSupervisor(ctx context.Context) error {
	watching, gone := make(chan struct{}), make(chan struct{})
	sup := a.sup
	watcher := a.system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Watch(sup)
			close(watching)
		case *actor.Terminated:
			close(gone)
			c.Stop(c.Self())
		}
	}))
	defer a.system.Root.Stop(watcher)
	// The watch first: protoactor answers a watch that reaches a stopping
	// actor with Terminated at once, before its children are gone.
	select {
	case <-watching:
	case <-ctx.Done():
		return ctx.Err()
	}
	a.system.Root.Stop(sup)
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
