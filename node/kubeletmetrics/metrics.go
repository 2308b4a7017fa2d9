package kubeletmetrics

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/probe"
	"github.com/actorlet/actorlet/node/volumes"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// The kubelet's buckets.
var (
	RuntimeOperationsBuckets = prometheus.ExponentialBuckets(.005, 2.5, 14)
	ImagePullBuckets         = []float64{1, 5, 10, 20, 30, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
	StorageOperationBuckets  = []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600}
)

// Metrics are one node's counts in the families (see the package doc).
// The nodes of one process may count in one set of families (Node): the
// families then count for all of them.
type Metrics struct {
	*families
	// mu guards the node's last relist (kubelet_pleg_relist_interval_seconds
	// is between two listings of the same node).
	mu         sync.Mutex
	lastRelist time.Time
}

// families are the collectors.
type families struct {
	runtimeOps, runtimeErrs *prometheus.CounterVec
	runtimeDur              *prometheus.HistogramVec

	relistDur, relistInterval prometheus.Histogram
	lastSeen                  prometheus.Gauge

	startedPods, startedPodsErrs prometheus.Counter
	startedContainers            *prometheus.CounterVec
	startedContainersErrs        *prometheus.CounterVec
	imagePull                    *prometheus.HistogramVec
	evictions                    *prometheus.CounterVec
	probes                       *prometheus.CounterVec
	podWorker                    *prometheus.HistogramVec
	storageOps                   *prometheus.HistogramVec
	terminatedContainers         *prometheus.CounterVec
	containersPerPod             prometheus.Histogram
	nodeName                     *prometheus.GaugeVec
	admissionRejections          *prometheus.CounterVec
	appendDur, appendEvents      prometheus.Histogram
	actorFamilies
}

var (
	_ cri.Observer     = (*Metrics)(nil)
	_ actors.EventSink = (*Metrics)(nil)
	_ probe.Prober     = CountedProber{}

	_ volumes.OperationObserver = (*Metrics)(nil)
	_ actors.EffectObserver     = (*Metrics)(nil)
	_ actor.MailboxMiddleware   = (*Metrics)(nil)
)

// New makes the families and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	op := []string{"operation_type"}
	m := &families{
		runtimeOps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_runtime_operations_total",
			Help: "Cumulative number of runtime operations by operation type."}, op),
		runtimeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_runtime_operations_errors_total",
			Help: "Cumulative number of runtime operation errors by operation type."}, op),
		runtimeDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kubelet_runtime_operations_duration_seconds",
			Help: "Duration in seconds of runtime operations. Broken down by operation type.", Buckets: RuntimeOperationsBuckets}, op),
		relistDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubelet_pleg_relist_duration_seconds",
			Help: "Duration in seconds for relisting pods in PLEG.", Buckets: prometheus.DefBuckets}),
		relistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubelet_pleg_relist_interval_seconds",
			Help: "Interval in seconds between relisting in PLEG.", Buckets: prometheus.DefBuckets}),
		lastSeen: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_pleg_last_seen_seconds",
			Help: "Timestamp in seconds when PLEG was last seen active."}),
		startedPods: prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_started_pods_total",
			Help: "Cumulative number of pods started"}),
		startedPodsErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_started_pods_errors_total",
			Help: "Cumulative number of errors when starting pods"}),
		startedContainers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_started_containers_total",
			Help: "Cumulative number of containers started"}, []string{"container_type"}),
		startedContainersErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_started_containers_errors_total",
			Help: "Cumulative number of errors when starting containers"}, []string{"container_type", "code"}),
		imagePull: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kubelet_image_pull_duration_seconds",
			Help: "Duration in seconds to pull an image.", Buckets: ImagePullBuckets}, []string{"image_size_in_bytes"}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_evictions",
			Help: "Cumulative number of pod evictions by eviction signal"}, []string{"eviction_signal"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prober_probe_total",
			Help: "Cumulative number of a liveness, readiness or startup probe for a container by result."},
			[]string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		podWorker: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kubelet_pod_worker_duration_seconds",
			Help:    "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync",
			Buckets: prometheus.DefBuckets}, []string{"operation_type"}),
		storageOps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "storage_operation_duration_seconds",
			Help: "Storage operation duration", Buckets: StorageOperationBuckets},
			[]string{"volume_plugin", "operation_name", "status", "migrated"}),
		terminatedContainers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_terminated_containers_total",
			Help: "Cumulative number of container terminations."}, []string{"container_type", "exit_code", "reason"}),
		containersPerPod: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubelet_containers_per_pod_count",
			Help: "The number of containers per pod.", Buckets: prometheus.ExponentialBuckets(1, 2, 5)}),
		admissionRejections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_admission_rejections_total",
			Help: "Cumulative number pod admission rejections by the Kubelet."}, []string{"reason"}),
		nodeName: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubelet_node_name",
			Help: "The node's name. The count is always 1."}, []string{"node"}),
		appendDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "actorlet_journal_append_duration_seconds",
			Help:    "Duration in seconds of a pod actor's journal append, its group commit's fsync included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		appendEvents: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "actorlet_journal_append_events",
			Help:    "Events per journal append of a pod actor.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64}}),
		actorFamilies: newActorFamilies(),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.runtimeOps, m.runtimeErrs, m.runtimeDur, m.relistDur, m.relistInterval,
		m.lastSeen, m.startedPods, m.startedPodsErrs, m.startedContainers, m.startedContainersErrs, m.imagePull,
		m.evictions, m.probes, m.podWorker, m.storageOps, m.terminatedContainers, m.containersPerPod, m.nodeName, m.admissionRejections,
		m.appendDur, m.appendEvents, m.effects, m.mailbox} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("kubelet metrics: %w", err)
	}
	// The kubelet exports these from the start, at zero.
	m.startedContainers.WithLabelValues("container")
	m.startedContainers.WithLabelValues("init_container")
	// actorlet's choice: every supported signal from 0, so a rate works
	// before the first eviction.
	for _, sig := range eviction.Signals {
		m.evictions.WithLabelValues(string(sig))
	}
	return &Metrics{families: m}, nil
}

// Node is another node's Metrics in m's families: what it counts adds to
// m's (and every other node's of the families), each node's relists timed
// apart, and SetNodeName adds its series to kubelet_node_name. A process
// of many nodes (actorlet fleet) holds one set of families, not one per
// node.
func (m *Metrics) Node() *Metrics { return &Metrics{families: m.families} }

// CallDone implements cri.Observer.
func (m *Metrics) CallDone(op string, took time.Duration, err error) {
	t := OperationType(op)
	m.runtimeOps.WithLabelValues(t).Inc()
	m.runtimeDur.WithLabelValues(t).Observe(took.Seconds())
	// Created with the operation's first call, at 0, so that an error
	// ratio has a denominator and a numerator from the start.
	errs := m.runtimeErrs.WithLabelValues(t)
	if err != nil {
		errs.Inc()
	}
}

// VolumeOperation implements volumes.OperationObserver: the kubelet's
// storage_operation_duration_seconds, status "success" or "fail-unknown"
// (the kubelet does not tell failures apart either), migrated "false" (no
// in-tree volume is migrated to CSI here).
func (m *Metrics) VolumeOperation(plugin, operation string, took time.Duration, err error) {
	status := "success"
	if err != nil {
		status = "fail-unknown"
	}
	m.storageOps.WithLabelValues(plugin, operation, status, "false").Observe(took.Seconds())
}

// operationTypes are the kubelet's operation_type values of the CRI RPCs
// whose snake_case name differs from its own.
var operationTypes = map[string]string{
	"RunPodSandbox":            "run_podsandbox",
	"StopPodSandbox":           "stop_podsandbox",
	"RemovePodSandbox":         "remove_podsandbox",
	"PodSandboxStatus":         "podsandbox_status",
	"ListPodSandbox":           "list_podsandbox",
	"ListPodSandboxStats":      "list_podsandbox_stats",
	"PodSandboxStats":          "podsandbox_stats",
	"UpdateContainerResources": "update_container",
	"ImageFsInfo":              "image_fs_info",
	"RuntimeConfig":            "runtime_config",
}

// OperationType is the kubelet's operation_type for a CRI RPC name:
// "RunPodSandbox" is "run_podsandbox", "ListContainers" "list_containers".
func OperationType(rpc string) string {
	if t, ok := operationTypes[rpc]; ok {
		return t
	}
	var b strings.Builder
	for i, r := range rpc {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Synced implements actors.WorkerObserver.
func (m *Metrics) Synced(op string, took time.Duration) {
	m.podWorker.WithLabelValues(op).Observe(took.Seconds())
}

// Appended implements actors.WorkerObserver.
func (m *Metrics) Appended(events int, took time.Duration) {
	m.appendDur.Observe(took.Seconds())
	m.appendEvents.Observe(float64(events))
}

// Relisted records a full listing of the runtime (cri.WatchOptions.Relisted).
func (m *Metrics) Relisted(started time.Time, took time.Duration) {
	m.relistDur.Observe(took.Seconds())
	m.mu.Lock()
	if !m.lastRelist.IsZero() {
		m.relistInterval.Observe(started.Sub(m.lastRelist).Seconds())
	}
	m.lastRelist = started
	m.mu.Unlock()
	m.lastSeen.Set(float64(started.Add(took).UnixNano()) / 1e9)
}

// Evicted counts an eviction (eviction.WithOnEvicted).
func (m *Metrics) Evicted(s eviction.Signal) { m.evictions.WithLabelValues(string(s)).Inc() }

// SetNodeName sets kubelet_node_name{node=name} to 1, as the kubelet does
// once at start.
func (m *Metrics) SetNodeName(name string) { m.nodeName.WithLabelValues(name).Set(1) }

// Recorded implements actors.EventSink: accepted pods' sizes, sandbox and
// container attempts, their failures and terminations, and image pulls.
func (m *Metrics) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	for _, env := range events {
		switch e := env.GetEvent().GetKind().(type) {
		case *pb.Event_PodAccepted:
			// The kubelet observes it when its pod worker takes a new pod.
			if pod != nil {
				m.containersPerPod.Observe(float64(len(pod.Spec.Containers)))
			}
		case *pb.Event_PodRejected:
			// A spec no API server would have let in is not an
			// admission's rejection.
			if r := e.PodRejected.Reason; r != "InvalidSpec" {
				m.admissionRejections.WithLabelValues(admissionReason(r)).Inc()
			}
		case *pb.Event_ContainerExited:
			x := e.ContainerExited
			m.terminatedContainers.WithLabelValues(containerType(pod, x.Name), strconv.Itoa(int(x.ExitCode)), x.Reason).Inc()
		case *pb.Event_SandboxRequested:
			m.startedPods.Inc()
		case *pb.Event_SandboxFailed:
			m.startedPodsErrs.Inc()
		case *pb.Event_ContainerRequested:
			m.startedContainers.WithLabelValues(containerType(pod, e.ContainerRequested.Name)).Inc()
		case *pb.Event_ContainerFailed:
			m.startedContainersErrs.WithLabelValues(containerType(pod, e.ContainerFailed.Name), e.ContainerFailed.Reason).Inc()
		case *pb.Event_ImagePulled:
			if p := e.ImagePulled; p.PullNanos > 0 {
				m.imagePull.WithLabelValues(ImageSizeBucket(p.ImageSize)).Observe(time.Duration(p.PullNanos).Seconds())
			}
		}
	}
}

// Acting implements actors.EventSink; nothing is counted before it is done.
func (m *Metrics) Acting(*corev1.Pod, lifecycle.Effect) {}

// containerType is the kubelet's container_type label of a pod's container.
func containerType(pod *corev1.Pod, name string) string {
	if pod != nil {
		for _, c := range pod.Spec.InitContainers {
			if c.Name == name {
				return "init_container"
			}
		}
	}
	return "container"
}

// imageSizeBuckets are the kubelet's image_size_in_bytes values: a size
// belongs to the last bucket whose lower bound it reaches.
var imageSizeBuckets = []struct {
	from  uint64
	label string
}{
	{0, "0-10MB"}, {10 << 20, "10MB-100MB"}, {100 << 20, "100MB-500MB"}, {500 << 20, "500MB-1GB"},
	{1 << 30, "1GB-5GB"}, {5 << 30, "5GB-10GB"}, {10 << 30, "10GB-20GB"}, {20 << 30, "20GB-30GB"},
	{30 << 30, "30GB-40GB"}, {40 << 30, "40GB-60GB"}, {60 << 30, "60GB-100GB"}, {100 << 30, "GT100GB"},
}

// ImageSizeBucket is the image_size_in_bytes label of an image of size bytes.
func ImageSizeBucket(size uint64) string {
	label := imageSizeBuckets[0].label
	for _, b := range imageSizeBuckets {
		if size >= b.from {
			label = b.label
		}
	}
	return label
}

// CountedProber counts every probe run in prober_probe_total, as the
// kubelet's prober does, and hands it to Prober.
type CountedProber struct {
	Prober  probe.Prober
	Metrics *Metrics
}

// Probe implements probe.Prober.
func (c CountedProber) Probe(ctx context.Context, t probe.Target, h corev1.ProbeHandler, timeout time.Duration) (probe.Result, string) {
	res, msg := c.Prober.Probe(ctx, t, h, timeout)
	if t.Pod != nil && t.Container != nil {
		c.Metrics.probes.WithLabelValues(t.Kind.String(), probeResult(res), t.Container.Name,
			t.Pod.Name, t.Pod.Namespace, string(t.Pod.UID)).Inc()
	}
	return res, msg
}

// probeResult is the kubelet's result label.
func probeResult(r probe.Result) string {
	switch r {
	case probe.Success:
		return "successful"
	case probe.Failure:
		return "failed"
	default:
		return "unknown"
	}
}
