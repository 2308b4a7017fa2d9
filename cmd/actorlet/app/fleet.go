package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/eventhub"
	"github.com/actorlet/actorlet/node/kubeletconfig"
	"github.com/actorlet/actorlet/node/kubeletmetrics"
)

// fleetFlags are actorlet fleet's command line.
type fleetFlags struct {
	kubeconfig    string
	nodes         int
	namePrefix    string
	rootDir       string
	journal       string
	nodeLabels    string
	taints        string
	maxPods       int32
	cpu, memory   string
	statusUpdate  time.Duration
	eventedRelist time.Duration
	leaseSeconds  int32
	apiQPS        int32
	apiBurst      int32
	apiInflight   int
	simLatency    string
	statusAddress string
	shutdownGrace time.Duration
	log           logOptions
}

// The journal kinds of --journal.
const (
	journalDisk   = "disk"
	journalMemory = "memory"
)

// defaultFleetEventedRelist is how often each node lists its simulated
// runtime in full beside its container events: the upstream kubelet's
// period for its generic PLEG when the Evented PLEG is on (300s), where a
// single node's default is cri.DefaultEventedRelistPeriod. Each listing
// goes over all of the node's pods: at 30s a fleet of 1,000 nodes made 33
// of them a second, 8 % of its CPU in a 30 s profile of a steady state of
// 70,000 pods (2026-12-08).
const defaultFleetEventedRelist = 5 * time.Minute

// maxFleetNodes is how many nodes get a /24 of pod IPs from 10.64.0.0/10.
const maxFleetNodes = 1 << 14

func newFleetCommand() *cobra.Command {
	var f fleetFlags
	cmd := &cobra.Command{
		Use:   "fleet --kubeconfig FILE --nodes N",
		Short: "Run many simulated nodes in one process, joined to a real API server",
		Long: `Run N actorlet nodes in one process, each joined to the cluster of --kubeconfig as
system:node:<name> (impersonated: the kubeconfig's identity must be allowed to impersonate
nodes; the Node authorizer and NodeRestriction then apply to each node as to a real one).
Each node is a full actorlet node, assembled as actorlet run assembles its own: its own
simulated runtime (in process), journal (<root-dir>/<name>), pod actors, Node object with
its capacity, labels and taints, and Lease. The nodes share one HTTP/2 connection pool, one
informer of every bound pod (dispatched by node name) and one of the Services.

Pods run only in the simulated runtimes, so only as long as the process lives: a fleet
stopped (SIGTERM) and started again on the same --root-dir recovers its journals and finds
empty runtimes. See README, "Fleet".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFleet(cmd.Context(), &f, cmd.Flags())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of an identity that may impersonate nodes (required)")
	fs.IntVar(&f.nodes, "nodes", 0, fmt.Sprintf("the number of nodes (1 to %d; required)", maxFleetNodes))
	fs.StringVar(&f.namePrefix, "name-prefix", "fleet-", "node names are this prefix and the node's number (fleet-00, fleet-01, ...)")
	fs.StringVar(&f.rootDir, "root-dir", "/var/lib/actorlet-fleet", "each node's directory (journal, pod volumes, logs) is <root-dir>/<name>")
	fs.StringVar(&f.journal, "journal", journalDisk, "disk: journals under --root-dir, fsynced; memory: on tmpfs (/dev/shm), not fsynced, removed when the fleet stops (excludes --root-dir)")
	fs.StringVar(&f.nodeLabels, "node-labels", "", "labels of every Node (key=value,...)")
	fs.StringVar(&f.taints, "register-with-taints", "", "taints of every Node (key=value:Effect,...)")
	fs.Int32Var(&f.maxPods, "max-pods", kubeletconfig.DefaultMaxPods, "pods each node runs at most (its pods capacity)")
	fs.StringVar(&f.cpu, "cpu", "", "CPU capacity of each node, a quantity (default: the host's)")
	fs.StringVar(&f.memory, "memory", "", "memory capacity of each node, a quantity (default: the host's)")
	fs.DurationVar(&f.statusUpdate, "node-status-update-frequency", kubeletconfig.DefaultNodeStatusUpdateFrequency, "how often each node's status is computed and sent when it changed")
	fs.DurationVar(&f.eventedRelist, "evented-relist-period", defaultFleetEventedRelist, "how often each node's runtime is listed in full beside its container events (the safety net for an event lost)")
	fs.Int32Var(&f.leaseSeconds, "node-lease-duration-seconds", kubeletconfig.DefaultNodeLeaseDurationSeconds, "duration of each node's Lease, renewed every quarter of it")
	fs.Int32Var(&f.apiQPS, "kube-api-qps", kubeletconfig.DefaultKubeAPIQPS, "API requests per second of each node")
	fs.Int32Var(&f.apiBurst, "kube-api-burst", kubeletconfig.DefaultKubeAPIBurst, "API request burst of each node")
	fs.IntVar(&f.apiInflight, "api-max-inflight", defaultFleetInflight, "API requests of all nodes' pods and events in flight at once, watches aside; the Leases and Node status are not bounded (0: no bound)")
	fs.StringVar(&f.simLatency, "sim-latency", "", "per-RPC latency of every simulated runtime, e.g. RunPodSandbox=50ms,PullImage=200ms")
	fs.StringVar(&f.statusAddress, "status-address", "", "serve /nodes, /metrics (the process's, and every runtime's sandboxes and containers), /healthz and /debug/pprof/ on this host:port (default: off)")
	fs.DurationVar(&f.shutdownGrace, "shutdown-grace-period", 10*time.Second, "how long the nodes' in-flight work may finish on SIGTERM")
	f.log.addFlags(fs)
	return cmd
}

// fleetNode is one node of a fleet.
type fleetNode struct {
	name  string
	built *builtNode
	// stop ends the node's Run.
	stop context.CancelFunc
}

// validate checks the flags that do not go through the kubelet's own
// parsing, naming the flag at fault.
func (f *fleetFlags) validate(fs *pflag.FlagSet) error {
	var errs []error
	if f.kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig is required: an identity that may impersonate nodes"))
	}
	if f.nodes < 1 || f.nodes > maxFleetNodes {
		errs = append(errs, fmt.Errorf("--nodes %d: want 1 to %d", f.nodes, maxFleetNodes))
	}
	switch f.journal {
	case journalDisk:
		if f.rootDir == "" {
			errs = append(errs, errors.New("--root-dir must not be empty"))
		}
	case journalMemory:
		if fs.Changed("root-dir") {
			errs = append(errs, errors.New("--root-dir and --journal memory exclude each other: a memory journal lives on tmpfs"))
		}
	default:
		errs = append(errs, fmt.Errorf("--journal %q: want %s or %s", f.journal, journalDisk, journalMemory))
	}
	if f.maxPods < 1 {
		errs = append(errs, fmt.Errorf("--max-pods %d: want at least 1", f.maxPods))
	}
	if f.apiQPS < 1 || f.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps %d and --kube-api-burst %d: want at least 1", f.apiQPS, f.apiBurst))
	}
	if _, err := f.capacity(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// capacity is the nodes' CPU and memory from --cpu and --memory (none
// given: the host's).
func (f *fleetFlags) capacity() (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, r := range []struct {
		flag, value string
		name        corev1.ResourceName
	}{{"--cpu", f.cpu, corev1.ResourceCPU}, {"--memory", f.memory, corev1.ResourceMemory}} {
		if r.value == "" {
			continue
		}
		q, err := resource.ParseQuantity(r.value)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", r.flag, r.value, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("%s %q: want a positive quantity", r.flag, r.value)
		}
		out[r.name] = q
	}
	return out, nil
}

// nodeName is the name of node i: the prefix and i, zero-padded to the
// width of the largest number.
func (f *fleetFlags) nodeName(i int) string {
	width := len(strconv.Itoa(f.nodes - 1))
	return fmt.Sprintf("%s%0*d", f.namePrefix, width, i)
}

// podCIDR is node i's pool of pod IPs: a /24 of 10.64.0.0/10, so that no
// two nodes of the fleet hand out the same IP.
func podCIDR(i int) string {
	return fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
}

// nodeArgs is node i's command line as actorlet run would take it: the
// node is configured, validated and assembled as actorlet run's own node
// is, with the kubelet API, the local ports and eviction off (the nodes
// share the host: its pressure is not theirs).
func (f *fleetFlags) nodeArgs(i int, root string) []string {
	name := f.nodeName(i)
	dir := filepath.Join(root, name)
	args := []string{
		"--hostname-override", name,
		"--root-dir", dir,
		"--pod-logs-dir", filepath.Join(dir, "logs"),
		"--container-runtime-endpoint", SimEndpoint,
		"--sim-pod-cidr", podCIDR(i),
		"--enable-server=false", "--read-only-port", "0", "--healthz-port", "0",
		"--eviction-hard", "none",
		"--max-pods", strconv.Itoa(int(f.maxPods)),
		"--node-status-update-frequency", f.statusUpdate.String(),
		"--evented-relist-period", f.eventedRelist.String(),
		"--node-lease-duration-seconds", strconv.Itoa(int(f.leaseSeconds)),
		"--kube-api-qps", strconv.Itoa(int(f.apiQPS)), "--kube-api-burst", strconv.Itoa(int(f.apiBurst)),
		"--shutdown-grace-period", f.shutdownGrace.String(),
		"--log-level", f.log.level, "--log-format", f.log.format,
	}
	if f.nodeLabels != "" {
		args = append(args, "--node-labels", f.nodeLabels)
	}
	if f.taints != "" {
		args = append(args, "--register-with-taints", f.taints)
	}
	if f.simLatency != "" {
		args = append(args, "--sim-latency", f.simLatency)
	}
	return args
}

// nodeConfigs resolves every node's configuration as actorlet run does;
// the first error names the node's flag at fault.
func (f *fleetFlags) nodeConfigs(root string) ([]*nodeConfig, error) {
	out := make([]*nodeConfig, f.nodes)
	for i := range out {
		parsed, own, err := parseCommandLine(f.nodeArgs(i, root), kubeletconfig.RunProfile, os.Stderr)
		if err == nil {
			out[i], err = resolve(parsed, own, kubeletconfig.RunProfile)
		}
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", f.nodeName(i), err)
		}
	}
	return out, nil
}

// memoryRoot makes the root of a --journal memory fleet on tmpfs.
func memoryRoot() (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		return "", fmt.Errorf("--journal memory needs /dev/shm on tmpfs: %v", err)
	}
	return os.MkdirTemp("/dev/shm", "actorlet-fleet-")
}

// runFleet runs the fleet until ctx ends, then stops every node.
func runFleet(ctx context.Context, f *fleetFlags, fs *pflag.FlagSet) error {
	if err := f.validate(fs); err != nil {
		return err
	}
	capacity, _ := f.capacity()
	root, jo := f.rootDir, journal.Options{}
	if f.journal == journalMemory {
		dir, err := memoryRoot()
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		root, jo.NoSync = dir, true
	}
	ncs, err := f.nodeConfigs(root)
	if err != nil {
		return err
	}
	log, err := ncs[0].logger()
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // stderr
	ncs[0].logStart(log)
	clients, err := newFleetClients(f.kubeconfig, f.apiInflight)
	if err != nil {
		return err
	}
	shared, err := newSharedInformers(clients.shared)
	if err != nil {
		return err
	}
	sharedCtx, stopShared := context.WithCancel(context.WithoutCancel(ctx))
	shared.start(sharedCtx)
	defer func() {
		stopShared()
		shared.stop()
	}()

	// One event broadcaster and one correlator for every node, as one
	// kubelet has: each node's events are written by its own client, as
	// the node. The correlator's caches keep client-go's 4,096 entries
	// each (about 470 bytes an entry, three caches) for the whole fleet;
	// one correlator per node held a node's, which for a thousand nodes
	// running a hundred pods each was about 140 MB.
	events, err := eventhub.New(eventhub.Options{Scheme: scheme.Scheme, Logger: log.Named("events")})
	if err != nil {
		return err
	}
	defer events.Shutdown()

	// One actor system for every node: each node's actors are named under
	// its name (agent.WithActorSystem).
	actorLog, actorsStopping := actorLogging(log)
	system := actor.NewActorSystem(actorLog)
	defer system.Shutdown()

	// One set of the kubelet's metric families, served on /metrics.
	reg := prometheus.NewRegistry()
	km, err := kubeletmetrics.New(reg)
	if err != nil {
		return err
	}

	started := time.Now()
	parts := fleetParts{clients: clients, shared: shared, events: events, metrics: km, actors: system, capacity: capacity, journal: jo, log: log}
	nodes, err := startFleetNodes(ctx, ncs, parts)
	defer func() {
		actorsStopping() // the stopping actors' dead letters are not news
		stopFleetNodes(nodes, f.shutdownGrace, log)
	}()
	if err != nil {
		return err
	}
	var status *fleetStatus
	if f.statusAddress != "" {
		if status, err = serveFleetStatus(f.statusAddress, nodes, shared, reg, log.Named("status")); err != nil {
			return err
		}
		defer status.shutdown()
	}
	addr := "off"
	if status != nil {
		addr = status.addr
	}
	log.Info("the fleet is running", zap.Int("nodes", len(nodes)), zap.String("kubeconfig", f.kubeconfig), zap.String("rootDir", root),
		zap.String("journal", f.journal), zap.String("status", addr), zap.Duration("startup", time.Since(started)))

	// A node ends by itself only when it cannot go on (its journal is
	// gone); the others run on.
	running := slices.Clone(nodes)
	var failed []error
	for len(running) > 0 {
		dones := make([]<-chan struct{}, len(running))
		for i, n := range running {
			dones[i] = n.built.agent.Done()
		}
		i := firstDone(ctx.Done(), dones)
		if i < 0 {
			log.Info("stopping the fleet; its pods end with the process")
			return errors.Join(failed...)
		}
		n := running[i]
		running = slices.Delete(running, i, i+1)
		failed = append(failed, fmt.Errorf("node %s: %w", n.name, n.built.agent.Err()))
		log.Error("a node of the fleet stopped", zap.String("node", n.name), zap.Error(n.built.agent.Err()))
	}
	return errors.Join(failed...)
}

// firstDone waits for stop or one of dones, and returns the index of a
// closed one of dones, or -1 once stop is. One wait for every node of a
// fleet, not a goroutine each.
func firstDone(stop <-chan struct{}, dones []<-chan struct{}) int {
	cases := make([]reflect.SelectCase, 0, len(dones)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(stop)})
	for _, d := range dones {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(d)})
	}
	i, _, _ := reflect.Select(cases)
	return i - 1
}

// fleetStartWorkers bound how many nodes start at once: each lists its
// runtime, opens its journal and registers its Node.
const fleetStartWorkers = 16

// fleetParts are what a fleet's nodes share, and what each is built with.
type fleetParts struct {
	clients *fleetClients
	shared  *sharedInformers
	events  *eventhub.Hub
	// metrics are the kubelet families every node counts in.
	metrics  *kubeletmetrics.Metrics
	actors   *actor.ActorSystem
	capacity corev1.ResourceList
	journal  journal.Options
	log      *zap.Logger
}

// startFleetNodes assembles and runs every node, and returns once each is
// Ready (its recovered pods have their actors), or with the first failure;
// the nodes started so far are returned either way.
func startFleetNodes(ctx context.Context, ncs []*nodeConfig, parts fleetParts) ([]*fleetNode, error) {
	var (
		mu    sync.Mutex
		nodes []*fleetNode
		errs  []error
		wg    sync.WaitGroup
	)
	work := make(chan *nodeConfig)
	for range min(fleetStartWorkers, len(ncs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for nc := range work {
				n, err := startFleetNode(ctx, nc, parts)
				mu.Lock()
				if n != nil {
					nodes = append(nodes, n)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("node %s: %w", nc.nodeName, err))
				}
				mu.Unlock()
			}
		}()
	}
	for _, nc := range ncs {
		mu.Lock()
		failed := len(errs) > 0
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		work <- nc
	}
	close(work)
	wg.Wait()
	slices.SortFunc(nodes, func(a, b *fleetNode) int { return strings.Compare(a.name, b.name) })
	if len(errs) == 0 && ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return nodes, errors.Join(errs...)
}

// startFleetNode builds one node, as actorlet run builds its own, and runs
// it until its stop; it returns once the node is Ready. A node that could
// not start is returned nil, released.
func startFleetNode(ctx context.Context, nc *nodeConfig, p fleetParts) (*fleetNode, error) {
	nodeAPI, err := p.clients.forNode(nc)
	if err != nil {
		return nil, err
	}
	if err := checkIdentity(ctx, nodeAPI.kube, nc.nodeName); err != nil {
		return nil, err
	}
	nlog := p.log.With(zap.String("node", nc.nodeName))
	b, err := buildNode(ctx, nc, nodeParts{log: nlog, metrics: p.metrics, kube: nodeAPI.kube, eventKube: nodeAPI.events,
		heartbeatKube: nodeAPI.heartbeat, shared: p.shared, events: p.events, actors: p.actors, capacity: p.capacity, journal: p.journal})
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	go func() { _ = b.agent.Run(runCtx) }()
	select {
	case <-b.agent.Ready():
		return &fleetNode{name: nc.nodeName, built: b, stop: stop}, nil
	case <-b.agent.Done():
		stop()
		b.close()
		return nil, b.agent.Err()
	}
}

// stopFleetNodes stops every node at once and waits for each within grace
// (then its API parts and runtime are released): the actors stop, the
// journals close. The pods' containers end with the in-process runtimes.
func stopFleetNodes(nodes []*fleetNode, grace time.Duration, log *zap.Logger) {
	if len(nodes) == 0 {
		return
	}
	started := time.Now()
	for _, n := range nodes {
		n.stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		sandboxes int
	)
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-n.built.agent.Done():
			case <-ctx.Done():
				log.Warn("a node did not stop within the shutdown grace period", zap.String("node", n.name))
				return
			}
			if err := n.built.agent.Err(); err != nil {
				log.Error("node stopped with an error", zap.String("node", n.name), zap.Error(err))
			}
			sbs, _, _ := n.built.counts(ctx)
			mu.Lock()
			sandboxes += sbs
			mu.Unlock()
			n.built.close()
		}()
	}
	wg.Wait()
	log.Info("the fleet stopped", zap.Int("nodes", len(nodes)), zap.Int("sandboxesDropped", sandboxes),
		zap.Duration("took", time.Since(started)))
}
