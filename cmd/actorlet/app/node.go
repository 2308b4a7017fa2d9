package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/certs"
	"github.com/actorlet/actorlet/node/eventhub"
	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/imagegc"
	"github.com/actorlet/actorlet/node/kubeletapi"
	"github.com/actorlet/actorlet/node/kubeletmetrics"
	"github.com/actorlet/actorlet/node/nodeactor"
	"github.com/actorlet/actorlet/podspec"
)

// runNode runs one node until ctx is done: connect the runtime, start the
// agent (journal, recovery, actors, sources), serve HTTP; on SIGTERM stop
// the agent and leave the pods running.
func runNode(ctx context.Context, nc *nodeConfig) error {
	log, err := nc.logger()
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // stderr
	log = log.With(zap.String("node", nc.nodeName))
	nc.logStart(log)
	kc := nc.kc
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tp, stopTracing, err := startTracing(ctx, kc.Tracing, nc.nodeName, log)
	if err != nil {
		return err
	}
	defer stopTracing() // after the runtime is closed (deferred later): the last spans are flushed
	restCfg, clientCerts, err := nc.clusterConfig(ctx, log)
	if err != nil {
		return err
	}
	var kube, eventKube, heartbeatKube kubernetes.Interface
	if restCfg != nil {
		if kube, err = kubernetes.NewForConfig(restCfg); err != nil {
			return fmt.Errorf("API client: %w", err)
		}
		// Events have their own limits (eventRecordQPS, eventBurst), as the
		// kubelet's event client.
		if eventKube, err = kubernetes.NewForConfig(eventConfig(restCfg, kc)); err != nil {
			return fmt.Errorf("event client: %w", err)
		}
		if heartbeatKube, err = kubernetes.NewForConfig(heartbeatConfig(restCfg, kc)); err != nil {
			return fmt.Errorf("heartbeat client: %w", err)
		}
	}
	var certWG sync.WaitGroup
	defer certWG.Wait()
	certCtx, stopCerts := context.WithCancel(ctx)
	defer stopCerts()
	runRotator := func(r *certs.Rotator) {
		certWG.Add(1)
		go func() {
			defer certWG.Done()
			r.Run(certCtx)
		}()
	}
	if clientCerts != nil {
		if err := clientCerts.RegisterMetrics(reg, certs.ClientCertificate); err != nil {
			return err
		}
		runRotator(clientCerts)
	}
	b, err := buildNode(ctx, nc, nodeParts{log: log, reg: reg, tp: tp, kube: kube, eventKube: eventKube, heartbeatKube: heartbeatKube, runRotator: runRotator})
	if err != nil {
		return err
	}
	// Closed after the agent stopped (deferred first, run last): the
	// agent's last statuses still get written while ctx lasts.
	defer b.close()
	node := b.agent
	runCtx, stopNode := context.WithCancel(context.WithoutCancel(ctx))
	defer stopNode()
	go func() { _ = node.Run(runCtx) }()
	select {
	case <-node.Ready():
	case <-node.Done():
		return node.Err()
	}
	servers, err := newLocalServers(nc, localProviders{Pods: node.Statuses(), Gatherer: reg, Summary: node.Stats(), Healthz: b.health}, log.Named("http"))
	if err == nil {
		err = servers.start(ctx)
	}
	if err != nil {
		stopNode()
		<-node.Done()
		return err
	}
	healthz, readOnly := servers.addrs()
	log.Info("actorlet is running", zap.String("healthz", healthz), zap.String("readOnly", readOnly),
		zap.String("rootDir", nc.node.RootDirectory), zap.String("manifests", kc.StaticPodPath), zap.Duration("recovery", node.RecoveryTime()))

	// The node ends by itself only when it cannot go on (its journal is
	// gone); Run logged why.
	select {
	case <-ctx.Done():
	case <-node.Done():
	}
	log.Info("shutting down; pods keep running")
	b.actorsStopping()
	stopCtx, cancel := context.WithTimeout(context.Background(), nc.own.shutdownGracePeriod)
	defer cancel()
	_ = servers.shutdown(stopCtx)
	stopNode()
	select {
	case <-node.Done():
		return node.Err()
	case <-stopCtx.Done():
		return fmt.Errorf("stop the node: %w", stopCtx.Err())
	}
}

// eventConfig is the API client configuration of a node's events: its own
// limits (eventRecordQPS, eventBurst), as the kubelet's event client.
func eventConfig(restCfg *rest.Config, kc *kubeletconfigv1beta1.KubeletConfiguration) *rest.Config {
	ec := rest.CopyConfig(restCfg)
	ec.QPS, ec.Burst = float32(*kc.EventRecordQPS), int(kc.EventBurst)
	return ec
}

// heartbeatConfig is the API client configuration of a node's heartbeats
// (its Node's status and its Lease), as the kubelet's heartbeat client: no
// client-side rate limit, so that a burst of pod status writes never holds
// a renewal back, and each request bounded by the shorter of the status
// update frequency and the lease duration.
func heartbeatConfig(restCfg *rest.Config, kc *kubeletconfigv1beta1.KubeletConfiguration) *rest.Config {
	hc := rest.CopyConfig(restCfg)
	hc.QPS, hc.Burst, hc.RateLimiter = -1, 0, nil
	hc.Timeout = heartbeatTimeout(kc)
	return hc
}

// heartbeatTimeout bounds one heartbeat request: the shorter of
// nodeStatusUpdateFrequency and nodeLeaseDurationSeconds.
func heartbeatTimeout(kc *kubeletconfigv1beta1.KubeletConfiguration) time.Duration {
	return min(kc.NodeStatusUpdateFrequency.Duration, time.Duration(kc.NodeLeaseDurationSeconds)*time.Second)
}

// nodeParts are what a node is given by the process that runs it: its
// logger, metrics registry, tracing, API clients acting as the node (nil:
// standalone), and, when many nodes share a process, the informers they
// share and their overrides.
type nodeParts struct {
	log *zap.Logger
	// reg is the node's registry, served on its ports; with metrics (a
	// fleet's) it is nil.
	reg *prometheus.Registry
	// metrics are the kubelet families of the fleet the node counts in
	// (kubeletmetrics.Metrics.Node; nil: its own on reg).
	metrics         *kubeletmetrics.Metrics
	tp              trace.TracerProvider
	kube, eventKube kubernetes.Interface
	// heartbeatKube writes the Node's status and renews its Lease (nil:
	// kube): it has no client-side rate limit (heartbeatConfig).
	heartbeatKube kubernetes.Interface
	// runRotator runs a certificate rotator until the process stops (nil:
	// the kubelet API, whose serving certificate rotates, is not served).
	runRotator func(*certs.Rotator)
	// shared are the informers of cluster-wide objects shared by the
	// nodes of a fleet (nil: the node's own).
	shared *sharedInformers
	// events is the event broadcaster shared by a fleet's nodes (nil: the
	// node's own).
	events *eventhub.Hub
	// actors is the actor system shared by a fleet's nodes (nil: the
	// node's own, see agent.WithActorSystem).
	actors *actor.ActorSystem
	// capacity replaces the host's resources of the same names in the
	// Node's capacity and allocatable (a fleet's --cpu, --memory).
	capacity corev1.ResourceList
	// journal are the journal's options.
	journal journal.Options
}

// builtNode is a node assembled by buildNode, not running yet.
type builtNode struct {
	agent *agent.Agent
	// health is the node's health check: the journal's appends (once the
	// agent runs) and the runtime.
	health func(ctx context.Context) error
	// actorsStopping quiets the actors' logging of their own stop.
	actorsStopping func()
	// counts tells how many sandboxes and containers the runtime holds.
	counts runtimeCounts
	// close releases the API parts and the runtime, once the agent is done.
	close func()
}

// buildNode connects the node's runtime and assembles the node from nc and
// p through agent.New: actorlet run builds its one node here, actorlet
// fleet each of its nodes.
func buildNode(ctx context.Context, nc *nodeConfig, p nodeParts) (b *builtNode, err error) {
	log, kc := p.log, nc.kc
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	latency, err := parseLatency(nc.own.simLatency)
	if err != nil {
		return nil, err
	}
	sysctls, err := sysctlAdmission(kc.AllowedUnsafeSysctls, log)
	if err != nil {
		return nil, err
	}
	// A fleet's nodes count in the fleet's kubelet families; their other
	// collectors (pod gauges, journal counters) are not served.
	var reg prometheus.Registerer = p.reg
	var km *kubeletmetrics.Metrics
	if p.metrics != nil {
		km, reg = p.metrics.Node(), unserved{}
	} else if km, err = kubeletmetrics.New(p.reg); err != nil {
		return nil, err
	}
	client, counts, closeRuntime, err := connectRuntime(ctx, kc.ContainerRuntimeEndpoint, kc.ImageServiceEndpoint, kc.RuntimeRequestTimeout.Duration,
		sim.Options{PodCIDR: nc.own.simPodCIDR, HostIP: nc.nodeIPs[0].String(), Latency: latency}, km, p.tp, log.Named("cri"))
	if err != nil {
		return nil, err
	}
	closers = append(closers, closeRuntime)
	ver, err := waitForRuntime(ctx, client, kc.ContainerRuntimeEndpoint, log)
	if err != nil {
		return nil, err
	}
	driver, err := nc.cgroupDriver(ctx, client, ver.RuntimeName == sim.DefaultRuntimeName, log)
	if err != nil {
		return nil, err
	}
	log.Info("container runtime", zap.String("name", ver.RuntimeName), zap.String("version", ver.RuntimeVersion),
		zap.String("endpoint", kc.ContainerRuntimeEndpoint), zap.String("cgroupDriver", driver))

	kube := p.kube
	mach := machine(nc.nodeName, nc.nodeIPs, kc.MaxPods, nc.node.RootDirectory)
	for name, q := range p.capacity {
		mach.Capacity[name], mach.Allocatable[name] = q.DeepCopy(), q.DeepCopy()
	}
	var api *apiParts
	if kube != nil {
		if api, err = newAPIParts(kube, p.eventKube, nc.nodeName, mach.Allocatable, p.shared, p.events, log); err != nil {
			return nil, err
		}
		// Stopped after the agent: the agent's last statuses still get
		// written while ctx lasts.
		closers = append(closers, api.stop)
	}
	var nodeCfg *nodeactor.Config
	if kube != nil && *kc.RegisterNode {
		cfg, err := nc.nodeActorConfig()
		if err != nil {
			return nil, err
		}
		heartbeat := p.heartbeatKube
		if heartbeat == nil {
			heartbeat = kube
		}
		cfg.NodeName, cfg.Client, cfg.Labels, cfg.Taints = nc.nodeName, heartbeat, nc.node.NodeLabels, kc.RegisterWithTaints
		cfg.Machine = mach
		cfg.Health, cfg.Logger = runtimeHealth(client), log.Named("node")
		cfg.Events = api.recorder
		if p.shared != nil {
			cfg.Nodes = p.shared.nodes
		}
		nodeCfg = &cfg
	}

	// A node of its own quiets its actors' logging of their own stop; a
	// fleet's nodes share an actor system, and the fleet does that.
	actorsOpt, actorsStopping := agent.WithActorSystem(p.actors), func() {}
	if p.actors == nil {
		var actorLog actor.ConfigOption
		actorLog, actorsStopping = actorLogging(log)
		actorsOpt = agent.WithActorOptions(actorLog)
	}
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial, lc.BackoffMax = nc.own.backoffInitial, maxRestartPeriod(kc)
	lc.KeepDeadContainers = int(nc.node.MaxPerPodContainerCount)
	podConfig := podspec.Options{PodLogsDir: kc.PodLogsDir, ClusterDNS: kc.ClusterDNS, ClusterDomain: kc.ClusterDomain,
		ResolvConf: *kc.ResolverConfig, MemoryCapacity: mach.Capacity.Memory().Value(),
		CgroupsPerQOS: *kc.CgroupsPerQOS, CgroupRoot: cgroupRoot(kc)}
	imageGCOptions := []imagegc.Option{imagegc.WithCapacity(imageFsCapacity)}
	var evictionOptions []eviction.Option
	if api != nil {
		// Image GC's and the eviction manager's events on the Node, as the
		// kubelet records them (FreeDiskSpaceFailed, ImageGCFailed,
		// EvictionThresholdMet).
		nodeRef := &corev1.ObjectReference{Kind: "Node", Name: nc.nodeName, UID: types.UID(nc.nodeName)}
		nodeEvent := func(typ, reason, msg string) { api.recorder.Event(nodeRef, typ, reason, msg) }
		imageGCOptions = append(imageGCOptions, imagegc.WithEvents(nodeEvent))
		evictionOptions = append(evictionOptions, eviction.WithEvents(nodeEvent))
	}
	opts := []agent.Option{
		agent.WithNodeName(nc.nodeName), agent.WithRootDir(nc.node.RootDirectory), agent.WithRuntime(client, ver.RuntimeName),
		agent.WithJournalOptions(p.journal),
		agent.WithLogger(log), agent.WithMetrics(reg, km), actorsOpt, agent.WithTracing(p.tp),
		agent.WithManifestDir(kc.StaticPodPath, kc.FileCheckFrequency.Duration),
		agent.WithLifecycle(lc), agent.WithPodConfig(podConfig), agent.WithRelistPeriod(nc.own.relistPeriod),
		agent.WithEventedRelistPeriod(nc.own.eventedRelistPeriod),
		agent.WithHostIP(nc.nodeIPs[0].String()), agent.WithAllocatable(mach.Allocatable),
		agent.WithVolumeRefreshPeriod(kc.SyncFrequency.Duration), agent.WithStopTimeout(nc.own.shutdownGracePeriod),
		agent.WithImageGC(nc.imageGC, imageGCOptions...), agent.WithLogRotation(nc.logRotation),
	}
	if nodeCfg != nil {
		opts = append(opts, agent.WithNodeActor(*nodeCfg))
	}
	if nc.eviction != nil {
		opts = append(opts, agent.WithEviction(*nc.eviction, 0, evictionOptions...))
	}
	// One health check for the health port, the read-only port and the
	// kubelet API: the journal's appends (once the agent runs) and the runtime.
	var node *agent.Agent
	healthCheck := func(ctx context.Context) error {
		if err := node.JournalHealth(); err != nil {
			return err
		}
		_, err := client.Version(ctx)
		return err
	}
	if kube != nil && *kc.EnableServer {
		if p.runRotator == nil {
			return nil, errors.New("the kubelet API (--enable-server) is not served here")
		}
		certFile, keyFile, servingCerts, err := nc.servingCertificate(kube, log)
		if err != nil {
			return nil, err
		}
		authn, authz := kc.Authentication, kc.Authorization
		apiOpts := &kubeletapi.Options{
			Address: kc.Address, Port: int(kc.Port), NodeName: nc.nodeName, NodeIPs: nc.nodeIPs,
			TLSCertFile: certFile, TLSKeyFile: keyFile, TLSMinVersion: kc.TLSMinVersion, TLSCipherSuites: kc.TLSCipherSuites,
			ClientCAFile: authn.X509.ClientCAFile, Client: kube, Anonymous: *authn.Anonymous.Enabled,
			TokenWebhookDisabled: !*authn.Webhook.Enabled, TokenCacheTTL: authn.Webhook.CacheTTL.Duration,
			AuthorizeAlways:    authz.Mode == kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow,
			AuthzAllowCacheTTL: authz.Webhook.CacheAuthorizedTTL.Duration, AuthzDenyCacheTTL: authz.Webhook.CacheUnauthorizedTTL.Duration,
			DebuggingHandlersDisabled: !*kc.EnableDebuggingHandlers, Metrics: p.reg, Healthz: healthCheck,
		}
		if servingCerts != nil {
			apiOpts.ServingCertificate = servingCerts.Current
			if err := servingCerts.RegisterMetrics(p.reg, certs.ServingCertificate); err != nil {
				return nil, err
			}
			p.runRotator(servingCerts)
		}
		opts = append(opts, agent.WithKubeletAPI(*apiOpts))
	}
	// Sysctls first, then resources: the kubelet's order of admit handlers.
	opts = append(opts, agent.WithAdmitHandler(sysctls))
	if api != nil {
		opts = append(opts, api.options()...)
	}
	if node, err = agent.New(opts...); err != nil {
		return nil, err
	}
	return &builtNode{agent: node, health: healthCheck, actorsStopping: actorsStopping, counts: counts, close: closeAll}, nil
}

// waitForRuntime asks the runtime for its version until it answers, as the
// kubelet waits for a runtime that starts after it (unreachable and
// timed-out calls are retried every second, with a warning every 10 s); an
// answer that is an error of another kind ends the wait.
func waitForRuntime(ctx context.Context, client *cri.Client, endpoint string, log *zap.Logger) (*runtimeapi.VersionResponse, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for attempt := 0; ; attempt++ {
		ver, err := client.Version(ctx)
		if err == nil {
			return ver, nil
		}
		if !cri.Retryable(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("container runtime at %s: %w", endpoint, err)
		}
		if attempt%10 == 0 {
			log.Warn("waiting for the container runtime", zap.String("endpoint", endpoint), zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("container runtime at %s: %w", endpoint, ctx.Err())
		case <-tick.C:
		}
	}
}

// imageFsCapacity is the size of the filesystem at an image filesystem's
// mountpoint; the simulated runtime's (in process or on a socket) is not
// on the host and has its fixed size.
func imageFsCapacity(ctx context.Context, mountpoint string) (uint64, error) {
	if mountpoint == sim.ImageFsMountpoint {
		return sim.ImageFsCapacity, nil
	}
	return imagegc.StatfsCapacity(ctx, mountpoint)
}

// unserved takes the collectors of a fleet's node that nobody reads: the
// fleet serves the kubelet families of all its nodes, not 1,000
// registries of each node's pod gauges and journal counters.
type unserved struct{}

func (unserved) Register(prometheus.Collector) error  { return nil }
func (unserved) MustRegister(...prometheus.Collector) {}
func (unserved) Unregister(prometheus.Collector) bool { return true }
