package certs

import (
	"errors"
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// Kind says which of the node's certificates a Rotator keeps, for the names
// of its metrics.
type Kind int

const (
	// ClientCertificate is the node's client certificate (--kubeconfig).
	ClientCertificate Kind = iota
	// ServingCertificate is the kubelet API's (serverTLSBootstrap).
	ServingCertificate
)

// rotationAgeBuckets are the kubelet's: 1 minute to 4 years.
var rotationAgeBuckets = []float64{60, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000}

// metrics are a Rotator's families; the zero value counts nothing.
type metrics struct {
	renewErrors prometheus.Counter
	rotationAge prometheus.Observer
}

// RegisterMetrics registers the rotator's metric families on reg with the
// kubelet v1.37's names, types and help: for the client certificate
// kubelet_certificate_manager_client_ttl_seconds (gauge) and
// kubelet_certificate_manager_client_expiration_renew_errors (counter); for
// the serving certificate kubelet_certificate_manager_server_ttl_seconds,
// kubelet_server_expiration_renew_errors and
// kubelet_certificate_manager_server_rotation_seconds (histogram). The TTL
// is the seconds until the current certificate expires on the rotator's
// clock, +Inf when there is none. Call it before Run.
func (r *Rotator) RegisterMetrics(reg prometheus.Registerer, k Kind) error {
	ttl := func() float64 {
		if c := r.Current(); c != nil && c.Leaf != nil {
			return math.Trunc(c.Leaf.NotAfter.Sub(r.o.Clock.Now()).Seconds())
		}
		return math.Inf(1)
	}
	var cs []prometheus.Collector
	var m metrics
	switch k {
	case ClientCertificate:
		errs := prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_certificate_manager_client_expiration_renew_errors",
			Help: "Counter of certificate renewal errors."})
		cs = append(cs, errs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kubelet_certificate_manager_client_ttl_seconds",
			Help: "Gauge of the TTL (time-to-live) of the Kubelet's client certificate. The value is in seconds until certificate expiry (negative if already expired). If client certificate is invalid or unused, the value will be +INF."}, ttl))
		m.renewErrors = errs
	case ServingCertificate:
		errs := prometheus.NewCounter(prometheus.CounterOpts{Name: "kubelet_server_expiration_renew_errors",
			Help: "Counter of certificate renewal errors."})
		age := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubelet_certificate_manager_server_rotation_seconds",
			Help: "Histogram of the number of seconds the previous certificate lived before being rotated.", Buckets: rotationAgeBuckets})
		cs = append(cs, errs, age, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kubelet_certificate_manager_server_ttl_seconds",
			Help: "Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. The value is in seconds until certificate expiry (negative if already expired). If serving certificate is invalid or unused, the value will be +INF."}, ttl))
		m.renewErrors, m.rotationAge = errs, age
	default:
		return fmt.Errorf("certificate metrics: unknown kind %d", k)
	}
	var errs []error
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("certificate metrics: %w", err)
	}
	r.mu.Lock()
	r.metrics = m
	r.mu.Unlock()
	return nil
}
