package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// secretPod carries an environment value that must not leak through the
// health port.
var secretPod = &corev1.Pod{
	ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
	Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
		Env: []corev1.EnvVar{{Name: "PASSWORD", Value: "hunter2"}}}}},
}

// TestHealthPortServesHealthzOnly: the health port's options (Healthz
// only) serve /healthz and 404 every other path, the pod list and the
// metrics included, as the kubelet's 10248.
func TestHealthPortServesHealthzOnly(t *testing.T) {
	s := start(t, Options{Port: 0})
	if resp, body := do(t, s, http.MethodGet, "/healthz"); resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("/healthz: %d %q; want 200 \"ok\"", resp.StatusCode, body)
	}
	for _, path := range []string{"/pods", "/metrics", "/stats/summary", "/metrics/resource", "/spec/"} {
		resp, body := do(t, s, http.MethodGet, path)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on the health port: %d; want 404", path, resp.StatusCode)
		}
		if strings.Contains(body, "hunter2") || strings.Contains(body, "PodList") {
			t.Errorf("GET %s on the health port leaks pods: %q", path, body)
		}
	}
}

// TestReadOnlyPortServesPodsMetricsSummary: the read-only port's options
// serve /healthz, /pods (specs as they are: it is unauthenticated),
// /metrics and /stats/summary.
func TestReadOnlyPortServesPodsMetricsSummary(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_running_pods", Help: "Pods."})
	reg.MustRegister(g)
	g.Set(1)
	sum := &fakeSummary{}
	s := start(t, Options{Port: 0, Pods: &fakeLister{pods: []*corev1.Pod{secretPod}}, Gatherer: reg, Summary: sum})

	if resp, body := do(t, s, http.MethodGet, "/healthz"); resp.StatusCode != http.StatusOK || body != "ok" {
		t.Errorf("/healthz: %d %q; want 200 \"ok\"", resp.StatusCode, body)
	}
	resp, body := do(t, s, http.MethodGet, "/pods")
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("/pods: %d %v: %s", resp.StatusCode, err, body)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "web" {
		t.Errorf("/pods items %+v; want web", list.Items)
	}
	if resp, body := do(t, s, http.MethodGet, "/metrics"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "\nkubelet_running_pods 1\n") {
		t.Errorf("/metrics: %d, lacks kubelet_running_pods 1:\n%s", resp.StatusCode, body)
	}

	resp, body = do(t, s, http.MethodGet, "/stats/summary?only_cpu_and_memory=true")
	var got statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(body), &got); resp.StatusCode != http.StatusOK || err != nil || got.Node.NodeName != "node-1" {
		t.Fatalf("/stats/summary: %d %v: %s", resp.StatusCode, err, body)
	}
	if sum.onlyCPU != 1 {
		t.Errorf("only_cpu_and_memory=true reached the provider %d times; want 1", sum.onlyCPU)
	}
	if resp, _ := do(t, s, http.MethodGet, "/stats/summary?only_cpu_and_memory=perhaps"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad only_cpu_and_memory: %d; want 400", resp.StatusCode)
	}
	sum.mu.Lock()
	sum.err = errors.New("runtime unavailable")
	sum.mu.Unlock()
	if resp, body := do(t, s, http.MethodGet, "/stats/summary"); resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "runtime unavailable") {
		t.Errorf("a failing summary: %d %q; want 500 naming the cause", resp.StatusCode, body)
	}
}
