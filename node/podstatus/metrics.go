package podstatus

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
)

// Metric names, as the kubelet names them (actorlet_pods is actorlet's own).
const (
	RunningPodsName       = "kubelet_running_pods"
	RunningContainersName = "kubelet_running_containers"
	PodStartDurationName  = "kubelet_pod_start_duration_seconds"
	PodsByPhaseName       = "actorlet_pods"
)

// PodStartDurationBuckets are the kubelet's buckets for
// kubelet_pod_start_duration_seconds.
var PodStartDurationBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// containerState is a value of the container_state label.
type containerState int

const (
	stateRunning containerState = iota
	stateExited
	stateCreated
	stateUnknown
	numStates
)

var containerStateLabels = [numStates]string{"running", "exited", "created", "unknown"}

func (s containerState) String() string { return containerStateLabels[s] }

// phases are the values of actorlet_pods' phase label.
var phases = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown}

// metrics are the Cache's collectors. Every label value is created up
// front, so all of them are exported (as 0) from the start.
type metrics struct {
	runningPods   prometheus.Gauge
	containers    [numStates]prometheus.Gauge
	startDuration prometheus.Histogram
	phases        map[corev1.PodPhase]prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	runningPods := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: RunningPodsName,
		Help: "Number of pods that have a ready pod sandbox (condition PodReadyToStartContainers is True).",
	})
	containers := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: RunningContainersName,
		Help: "Number of containers of the node's pods, by container state.",
	}, []string{"container_state"})
	startDuration := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    PodStartDurationName,
		Help:    "Duration in seconds from the node accepting a pod to the pod running with all its containers running.",
		Buckets: PodStartDurationBuckets,
	})
	byPhase := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: PodsByPhaseName,
		Help: "Number of the node's pods, by pod phase.",
	}, []string{"phase"})

	m := &metrics{
		runningPods:   runningPods,
		startDuration: startDuration,
		phases:        make(map[corev1.PodPhase]prometheus.Gauge, len(phases)),
	}
	for s := range numStates {
		m.containers[s] = containers.WithLabelValues(s.String())
	}
	for _, p := range phases {
		m.phases[p] = byPhase.WithLabelValues(string(p))
	}
	if reg != nil {
		reg.MustRegister(runningPods, containers, startDuration, byPhase)
	}
	return m
}

// add adds (sign 1) or subtracts (sign -1) one pod's share of the gauges.
func (m *metrics) add(s share, sign float64) {
	if !s.counted {
		return
	}
	if s.sandboxReady {
		m.runningPods.Add(sign)
	}
	for st, n := range s.containers {
		if n != 0 {
			m.containers[st].Add(sign * float64(n))
		}
	}
	m.phases[s.phase].Add(sign)
}

func (m *metrics) observeStart(d time.Duration) {
	m.startDuration.Observe(max(d, 0).Seconds())
}
