package faults

import (
	"cmp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Kind names a kind of injected fault, as counted.
type Kind string

// Kinds of injected faults.
const (
	KindError          Kind = "error"       // FailBefore
	KindErrorAfter     Kind = "error-after" // FailAfter
	KindHang           Kind = "hang"        // HangBefore
	KindHangAfter      Kind = "hang-after"  // HangAfter
	KindLatency        Kind = "latency"     // a call delayed
	KindDown           Kind = "down"        // a call refused during a restart's downtime
	KindRestart        Kind = "restart"     // a restart; its method label is the mode
	KindEventDrop      Kind = "event-drop"  // an event lost
	KindEventDuplicate Kind = "event-duplicate"
	KindEventReorder   Kind = "event-reorder"
	KindStreamBreak    Kind = "stream-break" // an event stream ended with Unavailable
)

// Count is how many faults of a kind were injected into one method's calls
// (for KindRestart, Method is the restart mode).
type Count struct {
	Kind   Kind
	Method string
	N      int64
}

type countKey struct {
	kind   Kind
	method string
}

// count records one injected fault. i.mu must not be held.
func (i *Injector) count(k Kind, method string) {
	i.mu.Lock()
	i.counts[countKey{k, method}]++
	i.mu.Unlock()
}

// Counts returns every non-zero count, by kind then method.
func (i *Injector) Counts() []Count {
	i.mu.Lock()
	out := make([]Count, 0, len(i.counts))
	for k, n := range i.counts {
		out = append(out, Count{Kind: k.kind, Method: k.method, N: n})
	}
	i.mu.Unlock()
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Method, b.Method))
	})
	return out
}

// Totals returns the counts summed over methods, by kind (for a report or
// a log line).
func (i *Injector) Totals() map[Kind]int64 {
	out := map[Kind]int64{}
	for _, c := range i.Counts() {
		out[c.Kind] += c.N
	}
	return out
}

// metricName is the counter the Collector exports.
const metricName = "actorlet_cri_faults_injected_total"

var faultsDesc = prometheus.NewDesc(metricName,
	"CRI faults injected, by kind and RPC method (for kind restart, the restart mode).",
	[]string{"kind", "method"}, nil)

// Collector exports the counts as the Prometheus counter
// actorlet_cri_faults_injected_total{kind,method}.
func (i *Injector) Collector() prometheus.Collector { return collector{i} }

type collector struct{ i *Injector }

func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- faultsDesc }

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.i.Counts() {
		ch <- prometheus.MustNewConstMetric(faultsDesc, prometheus.CounterValue, float64(n.N), string(n.Kind), n.Method)
	}
}
