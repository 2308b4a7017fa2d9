package tracing_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/node/tracing"
)

// collector is an OTLP/gRPC trace receiver: it keeps the spans it is sent,
// with their resource's attributes.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	resource map[string]string
	span     *tracepb.Span
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		res := stringAttrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				c.spans = append(c.spans, receivedSpan{resource: res, span: sp})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (c *collector) received() []receivedSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]receivedSpan(nil), c.spans...)
}

// stringAttrs are the string attributes of kvs.
func stringAttrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		if s, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok {
			out[kv.GetKey()] = s.StringValue
		}
	}
	return out
}

// startCollector serves a collector on 127.0.0.1 (any free port).
func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
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

// TestExportOverOTLP runs a pod on a node traced as the KubeletConfiguration's
// tracing block asks (endpoint, every span sampled) and sees its spans
// arrive at an OTLP collector: the pod's syncs and effects and the CRI
// calls, under the kubelet's service name and the node's host name.
func TestExportOverOTLP(t *testing.T) {
	c, addr := startCollector(t)
	cfg := &tracingapi.TracingConfiguration{Endpoint: ptr.To(addr), SamplingRatePerMillion: ptr.To[int32](1_000_000)}
	tp, err := tracing.NewProvider(context.Background(), cfg, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	pod := webPod()
	a := startNode(t, tp, pod)
	waitFor(t, "web running", func() bool {
		p, ok := a.Statuses().Get(string(pod.UID))
		return ok && p.Status.Phase == corev1.PodRunning
	})
	if err := stopOnce(a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil { // flushes what is buffered
		t.Fatal(err)
	}

	want := map[string]bool{"syncPod": false, "createPodSandbox": false, "startContainer": false,
		"runtime.v1.RuntimeService/RunPodSandbox": false, "runtime.v1.RuntimeService/StartContainer": false}
	for _, r := range c.received() {
		if r.resource["service.name"] != "kubelet" || r.resource["host.name"] != "node-1" {
			t.Errorf("span %s from resource %v, want service.name=kubelet host.name=node-1", r.span.GetName(), r.resource)
		}
		name := r.span.GetName()
		if _, ok := want[name]; !ok {
			continue
		}
		want[name] = true
		if name == "syncPod" || name == "createPodSandbox" || name == "startContainer" {
			if got := stringAttrs(r.span.GetAttributes())["k8s.pod.uid"]; got != string(pod.UID) {
				t.Errorf("%s: k8s.pod.uid %q", name, got)
			}
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("no %s span reached the collector (%d spans did)", name, len(c.received()))
		}
	}
}

// TestNoTracingConfigured: without a tracing block the provider records
// nothing.
func TestNoTracingConfigured(t *testing.T) {
	tp, err := tracing.NewProvider(context.Background(), nil, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tp.Tracer(tracing.InstrumentationScope).Start(context.Background(), "syncPod")
	defer sp.End()
	if sp.IsRecording() || sp.SpanContext().IsValid() {
		t.Fatal("a span of the provider without configuration records")
	}
}
