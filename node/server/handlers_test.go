package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHealthz(t *testing.T) {
	var failure atomic.Pointer[error]
	var sawDeadline atomic.Bool
	opts := testOptions()
	opts.Healthz = func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		sawDeadline.Store(ok)
		if err := failure.Load(); err != nil {
			return *err
		}
		return nil
	}
	s := start(t, opts)

	resp, body := do(t, s, http.MethodGet, "/healthz")
	if resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("healthy: %d %q; want 200 \"ok\"", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q; want text/plain", ct)
	}
	if !sawDeadline.Load() {
		t.Error("the health check's context has no deadline")
	}

	err := errors.New("journal: database closed")
	failure.Store(&err)
	resp, body = do(t, s, http.MethodGet, "/healthz")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "journal: database closed") {
		t.Fatalf("unhealthy: %d %q; want 500 with the error", resp.StatusCode, body)
	}

	failure.Store(nil)
	if resp, _ := do(t, s, http.MethodGet, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("healthy again: %d; want 200", resp.StatusCode)
	}
}

func TestHealthzWithoutCheckIsHealthy(t *testing.T) {
	s := start(t, testOptions())
	if resp, body := do(t, s, http.MethodGet, "/healthz"); resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("%d %q; want 200 \"ok\"", resp.StatusCode, body)
	}
}

func TestPods(t *testing.T) {
	lister := &fakeLister{pods: []*corev1.Pod{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			Status: corev1.PodStatus{
				Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{{
					Name: "c", Ready: true, RestartCount: 2,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				}},
			},
		},
		nil, // skipped
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd", UID: "uid-etcd"},
			Status:     corev1.PodStatus{Phase: corev1.PodPending},
		},
	}}
	opts := testOptions()
	opts.Pods = lister
	s := start(t, opts)

	resp, body := do(t, s, http.MethodGet, "/pods")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q; want application/json", ct)
	}
	var list corev1.PodList
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	if list.Kind != "PodList" || list.APIVersion != "v1" {
		t.Errorf("kind %q apiVersion %q; want PodList v1", list.Kind, list.APIVersion)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d items; want 2: %s", len(list.Items), body)
	}
	web, etcd := list.Items[0], list.Items[1]
	if web.Name != "web" || web.Namespace != "default" || web.UID != "uid-web" || etcd.Name != "etcd" {
		t.Errorf("items %s/%s, %s/%s; want default/web, kube-system/etcd in that order", web.Namespace, web.Name, etcd.Namespace, etcd.Name)
	}
	if web.Status.Phase != corev1.PodRunning || len(web.Status.ContainerStatuses) != 1 ||
		web.Status.ContainerStatuses[0].RestartCount != 2 || web.Status.ContainerStatuses[0].State.Running == nil {
		t.Errorf("web's status did not come through: %+v", web.Status)
	}
}

func TestPodsEmptyIsAnEmptyList(t *testing.T) {
	s := start(t, testOptions())
	_, body := do(t, s, http.MethodGet, "/pods")
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	if string(raw["items"]) != "[]" || string(raw["kind"]) != `"PodList"` || string(raw["apiVersion"]) != `"v1"` {
		t.Fatalf("body %s; want kind PodList, apiVersion v1, items []", body)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_running_pods", Help: "Pods."})
	reg.MustRegister(g)
	g.Set(3)
	opts := testOptions()
	opts.Gatherer = reg
	s := start(t, opts)

	resp, body := do(t, s, http.MethodGet, "/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if !strings.Contains(body, "\nkubelet_running_pods 3\n") {
		t.Fatalf("metrics lack kubelet_running_pods 3:\n%s", body)
	}
	g.Set(4)
	if _, body := do(t, s, http.MethodGet, "/metrics"); !strings.Contains(body, "\nkubelet_running_pods 4\n") {
		t.Fatalf("metrics are not live:\n%s", body)
	}
}

func TestRouting(t *testing.T) {
	s := start(t, testOptions())
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodGet, "/healthz/", http.StatusNotFound},
		{http.MethodGet, "/pods/x", http.StatusNotFound},
		{http.MethodGet, "/healthz?verbose=1", http.StatusOK},
		{http.MethodHead, "/healthz", http.StatusOK},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed},
		{http.MethodPut, "/pods", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/metrics", http.StatusMethodNotAllowed},
	} {
		resp, _ := do(t, s, tc.method, tc.path)
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d; want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusMethodNotAllowed && !strings.Contains(resp.Header.Get("Allow"), "GET") {
			t.Errorf("%s %s: Allow %q; want GET", tc.method, tc.path, resp.Header.Get("Allow"))
		}
		if cc := resp.Header.Get("Cache-Control"); tc.want == http.StatusOK && cc != "no-store" {
			t.Errorf("%s %s: Cache-Control %q; want no-store", tc.method, tc.path, cc)
		}
	}
}
