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
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
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
)

// Agent is a running node. Its methods are safe for concurrent use.
type Agent struct {
	cfg      *settings
	stats    *stats.Provider
	api      *kubeletapi.Server
	eviction *eviction.Manager
	log      *zap.Logger
	journal  *journal.Journal
	// journalHealth tracks the pods whose appends fail (JournalHealth).
	journalHealth *journalHealth
	statuses      *podstatus.Cache
	system        *actor.ActorSystem
	ownSystem     bool       // system is the node's, shut down when it stops
	sup           *actor.PID // the Supervisor
	nodeActor     *actor.PID // the NodeActor, or nil
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	recovery      time.Duration
	sources       *sourceForwarder
	fatal         chan error

	ready, done chan struct{}
	// err is what ended Run (read after done is closed).
	err error
	// stopRun ends the Run that Start began.
	stopRun context.CancelFunc
}

// New builds a node from opts (see Option); it checks them but starts
// nothing. Run runs it.
func New(opts ...Option) (*Agent, error) {
	cfg, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg, log: cfg.logger, journalHealth: newJournalHealth(filepath.Join(cfg.rootDir, journal.FileName)),
		sources: newSourceForwarder(cfg.logger.Named("sources")), fatal: make(chan error, 1),
		ready: make(chan struct{}), done: make(chan struct{})}, nil
}

// Start builds a node from opts and runs it until Stop: it returns once
// the node is Ready (every recovered pod has its actor), or with what kept
// it from starting. ctx bounds the start only.
func Start(ctx context.Context, opts ...Option) (*Agent, error) {
	a, err := New(opts...)
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopRun = stop
	go func() { _ = a.Run(runCtx) }()
	select {
	case <-a.ready:
		return a, nil
	case <-a.done:
		stop()
		return nil, a.err
	case <-ctx.Done():
		stop()
		<-a.done
		return nil, ctx.Err()
	}
}

// Run opens the journal, recovers (journal, runtime, sources), starts the
// actors and the node's services, and closes Ready. It runs until ctx ends
// or the node cannot go on (its journal is gone), then stops the node
// (within WithStopTimeout), closes Done and returns why it ended: nil for
// ctx's end. Pods keep running in the runtime; a new node on the same root
// dir takes them over. Run runs once.
func (a *Agent) Run(ctx context.Context) error {
	defer close(a.done)
	if err := a.start(ctx); err != nil {
		a.err = err
		return err
	}
	close(a.ready)
	var fatal error
	select {
	case <-ctx.Done():
	case fatal = <-a.fatal:
		a.log.Error("the node cannot go on", zap.Error(fatal))
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.stopTimeout)
	defer cancel()
	a.err = errors.Join(fatal, a.stop(stopCtx))
	return a.err
}

// Ready is closed once the node runs: every recovered pod has its actor.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// Done is closed once Run has returned; Err then says why.
func (a *Agent) Done() <-chan struct{} { return a.done }

// Err is what ended Run, once Done is closed (nil: its context ended and
// the node stopped cleanly).
func (a *Agent) Err() error {
	select {
	case <-a.done:
		return a.err
	default:
		return nil
	}
}

// start opens the journal, recovers and starts the actors: Ready.
func (a *Agent) start(ctx context.Context) error {
	cfg := a.cfg
	log := cfg.logger
	if err := os.MkdirAll(cfg.rootDir, 0o700); err != nil {
		return fmt.Errorf("root dir: %w", err)
	}
	jo := cfg.journal
	if jo.Logger == nil {
		jo.Logger = log.Named("journal")
	}
	j, err := journal.Open(ctx, cfg.rootDir, jo)
	if err != nil {
		return err
	}
	if q := j.Quarantined(); q != nil {
		log.Error("THE JOURNAL WAS CORRUPT AND HAS BEEN QUARANTINED; starting from the runtime and the pod sources", zap.Error(q))
	}
	a.journal = j
	reg := cfg.registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	a.statuses = podstatus.New(reg, cfg.clock)
	if err := reg.Register(newJournalCollector(j)); err != nil {
		j.Close()
		return err
	}
	rebuilt, err := newRebuiltReporter(reg, cfg.events)
	if err != nil {
		j.Close()
		return err
	}
	respawned, err := newRespawnReporter(reg, cfg.events)
	if err != nil {
		j.Close()
		return err
	}
	km := cfg.metrics
	if km == nil {
		if km, err = kubeletmetrics.New(reg); err != nil {
			j.Close()
			return err
		}
	}
	km.SetNodeName(cfg.nodeName)
	runCtx, cancel := context.WithCancel(ctx)
	a.cancel = cancel
	fail := func(err error) error {
		cancel()
		a.wg.Wait()
		a.stopActors()
		j.Close()
		return err
	}

	start := time.Now()
	// The runtime watcher subscribes to the runtime's events before the
	// recovery lists it: that listing is then the watcher's first, and
	// the events tell what changed after it (a runtime without events is
	// listed again by the watcher, as before).
	events, err := cri.Subscribe(runCtx, cfg.runtime)
	if err != nil {
		log.Debug("runtime events not subscribed before the recovery listing; the watcher lists again", zap.Error(err))
	}
	// Listings are numbered from the journal's incarnation (cri.Epochs).
	epochs := cri.NewEpochs(j.Incarnation())
	rec, views, err := recoverState(ctx, j, cfg.runtime, epochs, cfg.removedRetention, log)
	if err != nil {
		return fail(err)
	}
	for name, pods := range cfg.pods {
		rec.Sources = append(rec.Sources, actors.SourceSnapshot{Source: name, Pods: pods})
	}
	if cfg.manifestDir != "" {
		src, err := staticpod.New(staticpod.Options{Dir: cfg.manifestDir, NodeName: cfg.nodeName,
			ResyncPeriod: cfg.fileCheck, Logger: log.Named("staticpod")})
		if err != nil {
			return fail(err)
		}
		first, err := a.sources.run(runCtx, &a.wg, "file", src.Run)
		if err != nil {
			return fail(fmt.Errorf("static pods in %s: %w", cfg.manifestDir, err))
		}
		rec.Sources = append(rec.Sources, first)
	}
	for _, src := range cfg.sources {
		rec.Pending = append(rec.Pending, src.Name)
	}
	var status actors.StatusSink = a.statuses
	if len(cfg.statusSinks) > 0 {
		status = actors.StatusSinks(append([]actors.StatusSink{a.statuses}, cfg.statusSinks...))
	}
	root, err := filepath.Abs(cfg.rootDir)
	if err != nil {
		return fail(fmt.Errorf("root dir: %w", err))
	}
	vols := cfg.volumes
	if vols == nil {
		if vols, err = volumes.New(volumes.Options{RootDir: root, Source: cfg.envSource, Tokens: cfg.tokens,
			Allocatable: cfg.allocatable, Plugins: cfg.volumePlugins, Observer: km, Logger: log.Named("volumes")}); err != nil {
			return fail(err)
		}
	}
	// Probes and hooks run through the runtime (exec) or straight to the
	// pod's IP (httpGet, tcpSocket, grpc).
	deps := cfg.podDeps()
	if deps.Probers == nil || deps.Hooks == nil {
		runner := &probe.Runner{Exec: cfg.runtime}
		builtin := probe.ForActors{Runner: runner, Prober: kubeletmetrics.CountedProber{Prober: runner, Metrics: km}}
		if deps.Probers == nil {
			deps.Probers = builtin
		}
		if deps.Hooks == nil {
			deps.Hooks = builtin
		}
	}
	deps.Volumes, deps.Journal, deps.Status = vols, j, status
	deps.Epochs, deps.Lister = epochs, actors.CRILister{Client: cfg.runtime, Epochs: epochs}
	deps.Events = actors.EventSinks{cfg.events, km, podevents.NewLog(log.Named("pod"))}
	deps.Rebuilt, deps.Respawned, deps.AppendHealth = rebuilt, respawned, a.journalHealth
	deps.Worker, deps.Effects, deps.Mailbox = km, km, km
	deps.Fatal = func(err error) bool { return errors.Is(err, journal.ErrClosed) }
	deps.OnFatal = func(err error) {
		select {
		case a.fatal <- err:
		default:
		}
	}
	names := ""
	if a.system = cfg.actorSystem; a.system != nil {
		names = cfg.nodeName + "/"
	} else {
		a.system, a.ownSystem = newActorSystem(cfg.actorOptions...), true
	}
	// On a name taken (another node of this name in a shared system),
	// protoactor returns that actor's PID: it is not ours to stop.
	sup, err := a.system.Root.SpawnNamed(actors.NewSupervisorProps(runCtx, *deps, loader(j), rec), names+"supervisor")
	if err != nil {
		return fail(fmt.Errorf("start supervisor: %w", err))
	}
	a.sup = sup
	// The supervisor's Started handler spawned every recovered pod once
	// this answers.
	if _, err := a.system.Root.RequestFuture(a.sup, &actors.ActivePods{}, time.Minute).Result(); err != nil {
		return fail(fmt.Errorf("start supervisor: %w", err))
	}
	if a.stats, err = stats.New(cfg.runtime, stats.Options{NodeName: cfg.nodeName, RootDir: root, PodLogsDir: cfg.podConfig.PodLogsDir,
		FS: cfg.statsFS, Logger: log.Named("stats")}); err != nil {
		return fail(err)
	}
	var gc *imagegc.Manager
	if cfg.imageGC != nil {
		if gc, err = imagegc.New(cfg.runtime, *cfg.imageGC, append([]imagegc.Option{imagegc.WithLogger(log.Named("imagegc"))}, cfg.imageGCOptions...)...); err != nil {
			return fail(fmt.Errorf("image garbage collection: %w", err))
		}
	}
	if cfg.eviction != nil {
		opts := append([]eviction.Option{eviction.WithLogger(log.Named("eviction"))}, cfg.evictionOptions...)
		if cfg.evictionPeriod > 0 {
			opts = append(opts, eviction.WithPeriod(cfg.evictionPeriod))
		}
		if gc != nil {
			opts = append(opts, eviction.WithReclaimer(imageReclaimer{gc: gc}))
		}
		opts = append(opts, eviction.WithOnEvicted(km.Evicted))
		if a.eviction, err = eviction.New(*cfg.eviction, a.stats, a.evictionPods, a.evict, opts...); err != nil {
			return fail(fmt.Errorf("eviction: %w", err))
		}
	}
	var apiPort int32
	if cfg.kubeletAPI != nil {
		if apiPort, err = a.startKubeletAPI(runCtx, *cfg.kubeletAPI); err != nil {
			return fail(fmt.Errorf("kubelet API: %w", err))
		}
	}
	if cfg.nodeActor != nil {
		nc := *cfg.nodeActor
		if apiPort != 0 {
			nc.Machine.Port = apiPort
		}
		if a.eviction != nil {
			nc.Pressure = a.eviction.Conditions
		}
		pid, err := a.system.Root.SpawnNamed(nodeactor.Props(nc), names+"node")
		if err != nil {
			return fail(fmt.Errorf("start node actor: %w", err))
		}
		a.nodeActor = pid
	}
	a.recovery = time.Since(start)
	log.Info("recovered", zap.Duration("took", a.recovery), zap.Int("journaled", len(rec.States)), zap.Int("runtime", len(rec.Views)))

	for _, src := range cfg.sources {
		a.sources.start(runCtx, &a.wg, src, func(err error) {
			log.Error("pod source stopped", zap.String("source", src.Name), zap.Error(err))
		})
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.volumeUpkeep(runCtx, vols, cfg.volumeRefresh)
	}()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		compactRemovedLoop(runCtx, j, cfg.removedRetention, log.Named("journal"))
	}()
	// `actorlet journal` reads the running node's journal through this
	// socket (the file itself is locked).
	if l, err := journal.Listen(cfg.rootDir); err != nil {
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
	for _, h := range cfg.eventHandler {
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
	if cfg.logRotation != nil && cfg.logRotation.Enabled() {
		lr, err := logrotate.New(cfg.runtime, *cfg.logRotation, logrotate.WithLogger(log.Named("logrotate")))
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
		w := cri.NewWatcher(cfg.runtime, cri.WatchOptions{RelistPeriod: cfg.relistPeriod, EventedRelistPeriod: cfg.eventedRelist, Logger: log.Named("watch"), Initial: views,
			Subscription: events, Relisted: km.Relisted, Epochs: epochs})
		w.Run(runCtx, func(v *cri.PodView) { a.system.Root.Send(a.sup, actors.Observed(v.UID, v)) })
	}()
	return nil
}

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

// Stop ends the Run that Start began and waits for it until ctx is done;
// it returns what Run returned. Pods keep running in the runtime; a new node
// on the same root dir takes them over.
func (a *Agent) Stop(ctx context.Context) error {
	if a.stopRun == nil {
		return errors.New("agent: Stop is for a node begun by Start; cancel Run's context instead")
	}
	a.stopRun()
	select {
	case <-a.done:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop stops the node's actors and closes its journal. The CRI calls in
// flight are cancelled first (the actors run on Run's context), so their
// effects stay outstanding in the journal for the next start; stop waits
// for the actors until ctx is done.
func (a *Agent) stop(ctx context.Context) error {
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
	a.stopActors()
	errs = append(errs, a.journal.Close())
	return errors.Join(errs...)
}

// stopActors stops what is left of the node's actors: its own system, or,
// in a shared one, the node's actors (the Supervisor is stopped first by
// stopSupervisor when the node ran; this stops it when the start failed).
func (a *Agent) stopActors() {
	switch {
	case a.system == nil:
	case a.ownSystem:
		a.system.Shutdown()
	default:
		for _, pid := range []*actor.PID{a.nodeActor, a.sup} {
			if pid != nil {
				_ = a.system.Root.StopFuture(pid).Wait()
			}
		}
	}
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
