package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// readmeMetrics are the metric families README.md lists between its
// metrics:begin and metrics:end markers: name -> type.
func readmeMetrics(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- metrics:begin -->")
	table, _, ok2 := strings.Cut(rest, "<!-- metrics:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no metrics:begin/metrics:end table")
	}
	out := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		out[name] = strings.TrimSpace(cells[2])
	}
	if len(out) < 10 {
		t.Fatalf("README.md's metrics table lists %d families: %v", len(out), out)
	}
	return out
}

// TestMetricsREADME runs a node with a pod that pulls its image, mounts an
// emptyDir and has a readiness probe, a pod that completes and one the
// sysctl admission rejects, and checks that /metrics has every family README.md
// lists, with its type.
func TestMetricsREADME(t *testing.T) {
	want := readmeMetrics(t)
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	writeManifest(t, d.manifests, "probed.yaml", podManifest("probed", nil)+
		"    readinessProbe:\n      exec: {command: [\"true\"]}\n      periodSeconds: 1\n"+
		"    volumeMounts: [{name: scratch, mountPath: /scratch}]\n"+
		"  volumes: [{name: scratch, emptyDir: {}}]\n")
	writeManifest(t, d.manifests, "job.yaml", strings.Replace(strings.Replace(
		podManifest("job", map[string]string{"SIM_EXIT_AFTER": "0s", "SIM_EXIT_CODE": "0"}),
		"spec:\n", "spec:\n  restartPolicy: Never\n", 1), "example.com/app:1", "example.com/job:1", 1))
	// Rejected by the sysctl admission: kernel.msgmax is not in the safe set.
	writeManifest(t, d.manifests, "unsafe.yaml", strings.Replace(podManifest("unsafe", nil),
		"spec:\n", "spec:\n  securityContext:\n    sysctls: [{name: kernel.msgmax, value: \"65536\"}]\n", 1))
	n := startNode(t, s.endpoint, d)
	waitFor(t, "unsafe Failed with SysctlForbidden", func() (bool, string) {
		p, ok := n.pods(t)["default/unsafe-node-1"]
		return ok && p.Status.Phase == corev1.PodFailed && p.Status.Reason == "SysctlForbidden", fmt.Sprintf("%+v", p.Status)
	})
	waitFor(t, "job Succeeded", func() (bool, string) {
		p, ok := n.pods(t)["default/job-node-1"]
		return ok && p.Status.Phase == corev1.PodSucceeded, "not succeeded"
	})
	waitFor(t, "probed Running with a probe run", func() (bool, string) {
		p, ok := n.pods(t)["default/probed-node-1"]
		if !ok || p.Status.Phase != corev1.PodRunning {
			return false, "not running"
		}
		return strings.Contains(n.get(t, "/metrics"), "prober_probe_total{"), "no probe counted"
	})
	metrics := n.get(t, "/metrics")
	for name, typ := range want {
		if line := fmt.Sprintf("# TYPE %s %s\n", name, typ); !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(line))
		}
	}
	for _, sample := range []string{
		`kubelet_runtime_operations_total{operation_type="run_podsandbox"} 2`,
		`kubelet_started_pods_total 2`,
		`kubelet_terminated_containers_total{container_type="container",exit_code="0",reason="Completed"} 1`,
		`kubelet_containers_per_pod_count_count 2`,
		`kubelet_node_name{node="node-1"} 1`,
		`kubelet_admission_rejections_total{reason="SysctlForbidden"} 1`,
		// Both sandboxes were made, and nothing is making one now.
		`actorlet_effects_in_flight{effect="runsandbox"} 0`,
		`kubelet_started_containers_total{container_type="container"} 2`,
		`kubelet_image_pull_duration_seconds_count{image_size_in_bytes="0-10MB"} 2`,
		`kubelet_evictions{eviction_signal="memory.available"} 0`,
		`prober_probe_total{container="app",namespace="default",pod="probed-node-1"`,
		`storage_operation_duration_seconds_count{migrated="false",operation_name="volume_mount",status="success",volume_plugin="kubernetes.io/empty-dir"} `,
	} {
		if !strings.Contains(metrics, sample) {
			t.Errorf("/metrics lacks %q", sample)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", metrics)
	}
}
