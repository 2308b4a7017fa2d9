package server

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Defaults of Options: the kubelet's healthzBindAddress and healthzPort,
// and its readOnlyPort when it is turned on (it is 0, off, by default).
const (
	DefaultAddress      = "127.0.0.1"
	DefaultPort         = 10248
	DefaultReadOnlyPort = 10255
)

// Timeouts of the http.Server and of the health check.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 60 * time.Second
	// HealthzTimeout bounds one call of Options.Healthz.
	HealthzTimeout = 10 * time.Second
	// StopGrace is how long requests in flight may finish when Start's
	// context ends the server (Shutdown uses its own context instead).
	StopGrace = 5 * time.Second
	// SummaryTimeout bounds one call of Options.Summary.
	SummaryTimeout = 30 * time.Second
	// maxHeaderBytes: the endpoints take no input beyond the request line.
	maxHeaderBytes = 64 << 10
)

// PodLister lists the node's pods with their statuses (podstatus.Cache
// satisfies it). The server does not change what it returns.
type PodLister interface {
	List() []*corev1.Pod
}

// SummaryProvider answers /stats/summary (stats.Provider satisfies it).
// With onlyCPUAndMemory the summary may hold only CPU and memory figures.
type SummaryProvider interface {
	Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsv1alpha1.Summary, error)
}

// Options configure a Server. With only Healthz (and Logger) set it is the
// health port; with Pods, Gatherer and Summary the read-only port (see the
// package documentation).
type Options struct {
	// Address is the IP or host name to listen on. Empty means
	// DefaultAddress (localhost only).
	Address string
	// Port is the TCP port. 0 means any free port (see Server.Addr): the
	// caller applies DefaultPort, as kubeletconfig does for healthzPort.
	Port int
	// Pods answers /pods; nil: /pods is 404 (the health port).
	Pods PodLister
	// Gatherer answers /metrics; nil: /metrics is 404 (the health port).
	Gatherer prometheus.Gatherer
	// Summary answers /stats/summary; nil: that path is 404.
	Summary SummaryProvider
	// Healthz answers /healthz: nil error is healthy. It gets the request's
	// context, bounded by HealthzTimeout. Nil means always healthy.
	Healthz func(ctx context.Context) error
	// Logger receives failed health checks (at debug level), metric
	// gathering errors and the http.Server's own errors. Nil means none.
	Logger *zap.Logger
}

func (o *Options) withDefaults() error {
	if o.Address == "" {
		o.Address = DefaultAddress
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("%w: port %d out of range 0-65535", ErrInvalidOptions, o.Port)
	}
	if o.Healthz == nil {
		o.Healthz = func(context.Context) error { return nil }
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return nil
}
