// Package tracingtest is an OTLP/gRPC trace collector for tests: it keeps
// the spans it is sent, with their resource's attributes.
package tracingtest

import (
	"context"
	"net"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// Span is a span the collector received.
type Span struct {
	// Resource and Attributes are the string attributes of the span's
	// resource and of the span.
	Resource, Attributes map[string]string
	*tracepb.Span
}

// Collector implements OTLP's trace service. It is safe for concurrent use.
type Collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []Span
}

// Export keeps the request's spans.
func (c *Collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		res := StringAttrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				c.spans = append(c.spans, Span{Resource: res, Attributes: StringAttrs(sp.GetAttributes()), Span: sp})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Spans returns the spans received so far, in order.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Named returns the spans received so far named name.
func (c *Collector) Named(name string) []Span {
	var out []Span
	for _, s := range c.Spans() {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// StringAttrs are the string-valued attributes of kvs.
func StringAttrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		if s, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok {
			out[kv.GetKey()] = s.StringValue
		}
	}
	return out
}

// Start serves a Collector on 127.0.0.1 (a free port) until the test ends,
// and returns it with its address (host:port, the tracing endpoint).
func Start(t testing.TB) (*Collector, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() { srv.Stop(); <-done })
	return c, lis.Addr().String()
}
