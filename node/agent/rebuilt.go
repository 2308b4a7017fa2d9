package agent

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
)

// rebuiltReporter counts pods rebuilt from the runtime
// (actorlet_journal_rebuilt_pods_total) and passes each on to the node's
// event sink when it records such events (a Kubernetes event on the pod).
type rebuiltReporter struct {
	count prometheus.Counter
	next  actors.RebuildSink // nil: no event recorder
}

func newRebuiltReporter(reg prometheus.Registerer, events actors.EventSink) (*rebuiltReporter, error) {
	r := &rebuiltReporter{count: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "actorlet_journal_rebuilt_pods_total",
		Help: "Pods whose journal history was lost (damaged stream, quarantined, empty or missing journal) and was rebuilt from the container runtime.",
	})}
	if err := reg.Register(r.count); err != nil {
		return nil, err
	}
	r.next, _ = events.(actors.RebuildSink)
	return r, nil
}

// Rebuilt implements actors.RebuildSink.
func (r *rebuiltReporter) Rebuilt(pod *corev1.Pod, damage string) {
	r.count.Inc()
	if r.next != nil {
		r.next.Rebuilt(pod, damage)
	}
}
