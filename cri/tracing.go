package cri

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// TracingDialOptions returns the dial options that trace a CRI connection's
// calls with tp, as k8s.io/cri-client's remote runtime and image services
// do for the kubelet (RemoteRuntimeServiceBuilder.Build: otelgrpc's client
// stats handler with sent and received message events and the W3C trace
// context and baggage propagators): each call is a span named after its
// RPC (runtime.v1.RuntimeService/RunPodSandbox), a child of the span in
// the call's context. A nil tp returns none: no instrumentation at all.
func TracingDialOptions(tp trace.TracerProvider) []grpc.DialOption {
	if tp == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(TracingStatsHandler(tp))}
}

// TracingStatsHandler is the client stats handler of TracingDialOptions,
// for connections that take one without dial options (serve.Direct); nil
// for a nil tp.
func TracingStatsHandler(tp trace.TracerProvider) stats.Handler {
	if tp == nil {
		return nil
	}
	return otelgrpc.NewClientHandler(
		otelgrpc.WithMessageEvents(otelgrpc.ReceivedEvents, otelgrpc.SentEvents),
		otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		otelgrpc.WithTracerProvider(tp),
	)
}
