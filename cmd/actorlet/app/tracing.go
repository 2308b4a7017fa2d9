package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/node/tracing"
)

// tracingShutdownTimeout bounds the flush of buffered spans at exit.
const tracingShutdownTimeout = 5 * time.Second

// startTracing makes the node's TracerProvider from the KubeletConfiguration's
// tracing block (validated with the configuration), as the kubelet does.
// Without one it returns nil: nothing is traced, no exporter runs and the
// CRI connection carries no instrumentation. stop flushes and shuts the
// exporter down.
func startTracing(ctx context.Context, cfg *tracingapi.TracingConfiguration, nodeName string, log *zap.Logger) (tp trace.TracerProvider, stop func(), err error) {
	if cfg == nil {
		return nil, func() {}, nil
	}
	p, err := tracing.NewProvider(ctx, cfg, nodeName)
	if err != nil {
		return nil, nil, err
	}
	log.Info("tracing", zap.String("endpoint", ptr.Deref(cfg.Endpoint, "localhost:4317")),
		zap.Int32("samplingRatePerMillion", ptr.Deref(cfg.SamplingRatePerMillion, 0)))
	return p, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownTimeout)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			log.Warn("tracing: flush the last spans", zap.Error(err))
		}
	}, nil
}
