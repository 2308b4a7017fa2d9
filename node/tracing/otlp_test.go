package tracing_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/node/tracing"
	"github.com/actorlet/actorlet/node/tracing/tracingtest"
)

// TestExportOverOTLP runs a pod on a node traced as the KubeletConfiguration's
// tracing block asks (endpoint, every span sampled) and sees its spans
// arrive at an OTLP collector: the pod's syncs and effects and the CRI
// calls, under the kubelet's service name and the node's host name.
func TestExportOverOTLP(t *testing.T) {
	c, addr := tracingtest.Start(t)
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

	for _, s := range c.Spans() {
		if s.Resource["service.name"] != "kubelet" || s.Resource["host.name"] != "node-1" {
			t.Errorf("span %s from resource %v, want service.name=kubelet host.name=node-1", s.GetName(), s.Resource)
		}
	}
	for _, name := range []string{"syncPod", "createPodSandbox", "startContainer"} {
		spans := c.Named(name)
		if len(spans) == 0 {
			t.Errorf("no %s span reached the collector (%d spans did)", name, len(c.Spans()))
			continue
		}
		if got := spans[0].Attributes["k8s.pod.uid"]; got != string(pod.UID) {
			t.Errorf("%s: k8s.pod.uid %q", name, got)
		}
	}
	for _, name := range []string{"runtime.v1.RuntimeService/RunPodSandbox", "runtime.v1.RuntimeService/StartContainer"} {
		if len(c.Named(name)) == 0 {
			t.Errorf("no %s span reached the collector", name)
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
