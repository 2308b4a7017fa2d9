package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
)

// respawnReporter counts PodActors started again after they failed too
// often (actorlet_supervisor_respawns_total) and passes each on to the
// node's event sink when it records such events (a Kubernetes event on the
// pod).
type respawnReporter struct {
	count prometheus.Counter
	next  actors.RespawnSink // nil: no event recorder
}

func newRespawnReporter(reg prometheus.Registerer, events actors.EventSink) (*respawnReporter, error) {
	r := &respawnReporter{count: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "actorlet_supervisor_respawns_total",
		Help: "Pod actors that failed more often than their restart strategy allows and were started again by the Supervisor after back-off.",
	})}
	if err := reg.Register(r.count); err != nil {
		return nil, err
	}
	r.next, _ = events.(actors.RespawnSink)
	return r, nil
}

// Respawning implements actors.RespawnSink.
func (r *respawnReporter) Respawning(pod *corev1.Pod, uid string, after time.Duration, respawns int) {
	r.count.Inc()
	if r.next != nil {
		r.next.Respawning(pod, uid, after, respawns)
	}
}
