package kubeletmetrics

import "github.com/prometheus/client_golang/prometheus"

// actorFamilies are actorlet's gauges of its pod and container actors:
// effects being carried out and messages waiting in mailboxes.
type actorFamilies struct {
	effects *prometheus.GaugeVec
	mailbox prometheus.Gauge
}

func newActorFamilies() actorFamilies {
	return actorFamilies{
		effects: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "actorlet_effects_in_flight",
			Help: "Effects a container actor is carrying out now (a CRI call, a volume set-up, a hook), by kind."},
			[]string{"effect"}),
		mailbox: prometheus.NewGauge(prometheus.GaugeOpts{Name: "actorlet_actor_mailbox_messages",
			Help: "Messages posted to the mailboxes of pod and container actors and not yet handled, node-wide."}),
	}
}

// EffectStarted implements actors.EffectObserver.
func (m *Metrics) EffectStarted(kind string) { m.effects.WithLabelValues(kind).Inc() }

// EffectEnded implements actors.EffectObserver.
func (m *Metrics) EffectEnded(kind string) { m.effects.WithLabelValues(kind).Dec() }

// MailboxStarted implements protoactor's actor.MailboxMiddleware.
func (m *Metrics) MailboxStarted() {}

// MessagePosted implements actor.MailboxMiddleware.
func (m *Metrics) MessagePosted(any) { m.mailbox.Inc() }

// MessageReceived implements actor.MailboxMiddleware: the message was
// handled (a message whose handler panicked is not counted out).
func (m *Metrics) MessageReceived(any) { m.mailbox.Dec() }

// MailboxEmpty implements actor.MailboxMiddleware.
func (m *Metrics) MailboxEmpty() {}
