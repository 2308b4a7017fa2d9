package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorlet/actorlet/node/kubeletmetrics"
)

// TestFleetMetricsServeTheKubeletFamilies: the fleet's /metrics serves one
// set of the kubelet's families, counting for all its nodes, with each
// node's kubelet_node_name.
func TestFleetMetricsServeTheKubeletFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	km, err := kubeletmetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fleet-0", "fleet-1"} {
		m := km.Node()
		m.SetNodeName(name)
		m.CallDone("RunPodSandbox", time.Millisecond, nil)
	}
	rr := httptest.NewRecorder()
	fleetStatusHandler(nil, nil, reg).ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rr.Body.String()
	for _, want := range []string{
		`kubelet_runtime_operations_total{operation_type="run_podsandbox"} 2`,
		`kubelet_node_name{node="fleet-0"} 1`,
		`kubelet_node_name{node="fleet-1"} 1`,
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
}

// TestFleetMetricsCountEachRuntime: /metrics gives each node's sandboxes
// and containers as its runtime counts them, and leaves out a node whose
// runtime does not answer.
func TestFleetMetricsCountEachRuntime(t *testing.T) {
	counted := func(sbs, cs int, err error) runtimeCounts {
		return func(context.Context) (int, int, error) { return sbs, cs, err }
	}
	nodes := []*fleetNode{
		{name: "fleet-0", built: &builtNode{counts: counted(2, 3, nil)}},
		{name: "fleet-1", built: &builtNode{counts: counted(0, 0, errors.New("runtime down"))}},
	}
	rr := httptest.NewRecorder()
	fleetStatusHandler(nodes, nil, prometheus.NewRegistry()).ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rr.Body.String()
	for _, want := range []string{
		`actorlet_fleet_runtime_pod_sandboxes{node="fleet-0"} 2`,
		`actorlet_fleet_runtime_containers{node="fleet-0"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	if strings.Contains(body, `node="fleet-1"`) {
		t.Errorf("/metrics has a count of fleet-1, whose runtime did not answer")
	}
}
