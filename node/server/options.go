package server

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// Defaults of Options, the kubelet's healthzBindAddress and healthzPort.
const (
	DefaultAddress = "127.0.0.1"
	DefaultPort    = 10248
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
	// maxHeaderBytes: the endpoints take no input beyond the request line.
	maxHeaderBytes = 64 << 10
)

// PodLister lists the node's pods with their statuses (podstatus.Cache
// satisfies it). The server does not change what it returns.
type PodLister interface {
	List() []*corev1.Pod
}

// Options configure a Server.
type Options struct {
	// Address is the IP or host name to listen on. Empty means
	// DefaultAddress (localhost only).
	Address string
	// Port is the TCP port. 0 means any free port (see Server.Addr): the
	// caller applies DefaultPort, as kubeletconfig does for healthzPort.
	Port int
	// Pods answers /pods. Required.
	Pods PodLister
	// Gatherer answers /metrics. Required.
	Gatherer prometheus.Gatherer
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
	if o.Pods == nil {
		return fmt.Errorf("%w: Pods is required", ErrInvalidOptions)
	}
	if o.Gatherer == nil {
		return fmt.Errorf("%w: Gatherer is required", ErrInvalidOptions)
	}
	if o.Healthz == nil {
		o.Healthz = func(context.Context) error { return nil }
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return nil
}
