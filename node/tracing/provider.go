package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"k8s.io/component-base/tracing"
	tracingapi "k8s.io/component-base/tracing/api/v1"
)

// ServiceName is the service.name of the spans, the kubelet's
// (cmd/kubelet/app/server.go newTracerProvider: componentKubelet), so that
// what looks for the kubelet's traces finds actorlet's.
const ServiceName = "kubelet"

// InstrumentationScope names actorlet's tracer. The kubelet's is
// "k8s.io/kubernetes/pkg/kubelet".
const InstrumentationScope = "github.com/actorlet/actorlet"

// NewProvider returns the node's TracerProvider, as the kubelet makes it
// (newTracerProvider in cmd/kubelet/app/server.go): for a nil configuration a
// noop provider that exports nothing; otherwise component-base's provider,
// which exports over OTLP gRPC to cfg.Endpoint (default localhost:4317,
// insecure), samples samplingRatePerMillion of the root spans (none when
// unset or 0) and follows its parent's decision otherwise. The resource
// names the service (ServiceName) and the node (host.name). cfg must be
// valid (tracingapi.ValidateTracingConfiguration, which the configuration's
// validation runs). opts are added to the exporter's options (tests).
//
// Shutdown flushes the spans still buffered; call it when the node stops.
func NewProvider(ctx context.Context, cfg *tracingapi.TracingConfiguration, nodeName string, opts ...otlptracegrpc.Option) (tracing.TracerProvider, error) {
	if cfg == nil {
		return tracing.NewNoopTracerProvider(), nil
	}
	res := []resource.Option{resource.WithAttributes(
		semconv.ServiceNameKey.String(ServiceName),
		semconv.HostNameKey.String(nodeName),
	)}
	tp, err := tracing.NewProvider(ctx, cfg, opts, res)
	if err != nil {
		return nil, fmt.Errorf("could not configure tracer provider: %w", err)
	}
	return tp, nil
}
