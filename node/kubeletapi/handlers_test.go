package kubeletapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeSummary returns a summary of the node and records the flag asked.
type fakeSummary struct {
	mu    sync.Mutex
	asked []bool
}

func (f *fakeSummary) Summary(_ context.Context, onlyCPUAndMemory bool) (*statsv1alpha1.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, onlyCPUAndMemory)
	usage := uint64(42)
	return &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{NodeName: testNode, CPU: &statsv1alpha1.CPUStats{UsageNanoCores: &usage}},
		Pods: []statsv1alpha1.PodStats{{PodRef: statsv1alpha1.PodReference{Name: "p", Namespace: "ns", UID: "u"}}},
	}, nil
}

func (f *fakeSummary) takeAsked() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	return a
}

func TestStatsSummary(t *testing.T) {
	sum := &fakeSummary{}
	e := start(t, func(o *Options) { o.Summary = sum })
	c := e.httpClient(e.client)
	for _, tc := range []struct {
		method, path, body string
		only               bool
	}{
		{"GET", "/stats/summary", "", false},
		{"GET", "/stats/summary?only_cpu_and_memory=true", "", true},
		{"POST", "/stats/summary", `{"onlyCPUAndMemory":true}`, true},
		{"POST", "/stats/summary", `{"onlyCPUAndMemory":false}`, false},
		{"POST", "/stats/summary", "", false},
	} {
		resp, body := e.request(c, tc.method, tc.path, tc.body)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s = %d %q", tc.method, tc.path, resp.StatusCode, body)
		}
		var got statsv1alpha1.Summary
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", tc.method, tc.path, body, err)
		}
		if got.Node.NodeName != testNode || *got.Node.CPU.UsageNanoCores != 42 || len(got.Pods) != 1 || got.Pods[0].PodRef.Name != "p" {
			t.Errorf("%s %s: summary %+v", tc.method, tc.path, got)
		}
		if asked := sum.takeAsked(); len(asked) != 1 || asked[0] != tc.only {
			t.Errorf("%s %s %q: provider asked %v; want onlyCPUAndMemory=%v", tc.method, tc.path, tc.body, asked, tc.only)
		}
	}
	if resp, _ := e.request(c, "POST", "/stats/summary", "{not json"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body = %d; want 400", resp.StatusCode)
	}
}

func TestPodsHealthzAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "node_memory_working_set_bytes"}))
	healthErr := errors.New("runtime down")
	var mu sync.Mutex
	healthy := true
	e := start(t, func(o *Options) {
		o.Pods = PodListerFunc(func() []*corev1.Pod {
			return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, nil}
		})
		o.ResourceMetrics = reg
		o.Metrics = prometheus.NewRegistry()
		o.Healthz = func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if healthy {
				return nil
			}
			return healthErr
		}
	})
	resp, body := e.get("/pods")
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /pods = %d %q, %v", resp.StatusCode, body, err)
	}
	if list.Kind != "PodList" || list.APIVersion != "v1" || len(list.Items) != 1 || list.Items[0].Name != "p" {
		t.Errorf("pods %+v", list)
	}
	if resp, body := e.get("/metrics/resource"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "node_memory_working_set_bytes 0") {
		t.Errorf("GET /metrics/resource = %d %q", resp.StatusCode, body)
	}
	if resp, _ := e.get("/metrics"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics = %d", resp.StatusCode)
	}
	mu.Lock()
	healthy = false
	mu.Unlock()
	if resp, body := e.get("/healthz"); resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "runtime down") {
		t.Errorf("unhealthy GET /healthz = %d %q", resp.StatusCode, body)
	}
	// No providers: 404, after authorization.
	for _, p := range []string{"/stats/summary", "/containerLogs/ns/p/c", "/exec/ns/p/c", "/spec"} {
		if resp, _ := e.get(p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s without a provider = %d; want 404", p, resp.StatusCode)
		}
	}
}
