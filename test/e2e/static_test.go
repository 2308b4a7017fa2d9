package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestStaticPods runs the actorlet binary against `actorlet sim-runtime` over
// a unix socket: static pods reach Running, a crashing one restarts with
// back-off, an invalid manifest is rejected while the others go on, a
// removed manifest stops its pod, and the journal CLI tells the story.
func TestStaticPods(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t, dir)
	d := newNodeDirs(t)
	writeManifest(t, d.manifests, "web.yaml", podManifest("web", nil))
	writeManifest(t, d.manifests, "crash.yaml", podManifest("crash", map[string]string{"SIM_EXIT_AFTER": "50ms", "SIM_EXIT_CODE": "3"}))
	writeManifest(t, d.manifests, "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec:\n  containers:\n  - name: app\n")
	n := startNode(t, s.endpoint, d)

	waitFor(t, "web Running and Ready", func() (bool, string) {
		p, ok := n.pods(t)["default/web-node-1"]
		return ok && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].Ready && p.Status.PodIP != "" && p.Status.HostIP == "127.0.0.1", fmt.Sprintf("%+v", p.Status.Phase)
	})
	waitFor(t, "crash restarted at least twice", func() (bool, string) {
		p, ok := n.pods(t)["default/crash-node-1"]
		if !ok || len(p.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount >= 2 && cs.LastTerminationState.Terminated != nil &&
			cs.LastTerminationState.Terminated.ExitCode == 3, fmt.Sprintf("restarts=%d", cs.RestartCount)
	})
	if _, ok := n.pods(t)["default/broken-node-1"]; ok {
		t.Fatal("the invalid manifest's pod runs")
	}
	if out := n.output(); !strings.Contains(out, "broken.yaml") || !strings.Contains(out, "image") {
		t.Fatalf("no log line names broken.yaml and its problem:\n%s", tail(out, 30))
	}
	metrics := n.get(t, "/metrics")
	for _, m := range []string{"kubelet_running_pods 2", "kubelet_pod_start_duration_seconds_count", "actorlet_journal_commits_total"} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %q", m)
		}
	}
	if h := n.get(t, "/healthz"); h != "ok" {
		t.Errorf("/healthz = %q", h)
	}
	// The health port serves /healthz only, as the kubelet's 10248.
	if code := statusOf(t, n.healthURL+"/healthz"); code != http.StatusOK {
		t.Errorf("health port /healthz: %d", code)
	}
	for _, path := range []string{"/pods", "/metrics"} {
		if code := statusOf(t, n.healthURL+path); code != http.StatusNotFound {
			t.Errorf("health port %s: %d; want 404", path, code)
		}
	}

	webUID := string(n.pods(t)["default/web-node-1"].UID)
	if err := os.Remove(filepath.Join(d.manifests, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web stopped and removed from the runtime", func() (bool, string) {
		v, err := s.client.ListPod(context.Background(), webUID)
		if err != nil {
			return false, err.Error()
		}
		_, listed := n.pods(t)["default/web-node-1"]
		return v.Empty() && !listed, fmt.Sprintf("sandboxes=%d containers=%d listed=%v", len(v.Sandboxes), len(v.Containers), listed)
	})
	// Put back as it was: the same UID (from the content) lives again.
	writeManifest(t, d.manifests, "web.yaml", podManifest("web", nil))
	waitFor(t, "web Running again after its manifest came back", func() (bool, string) {
		p, ok := n.pods(t)["default/web-node-1"]
		return ok && string(p.UID) == webUID && p.Status.Phase == corev1.PodRunning, fmt.Sprintf("%v", p.Status.Phase)
	})
	if v := s.violations(t); len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
	n.stop()

	out, errOut, code := runCLI(t, "journal", "verify", "--root-dir", d.root)
	if code != 0 {
		t.Fatalf("journal verify exit %d: %s %s", code, out, errOut)
	}
	out, _, code = runCLI(t, "journal", "pods", "--root-dir", d.root)
	if code != 0 || !strings.Contains(out, "default/crash-node-1") || !strings.Contains(out, "default/web-node-1") {
		t.Fatalf("journal pods (exit %d):\n%s", code, out)
	}
	// web's first life was compacted into a snapshot at its removal; its
	// second life follows it.
	out, _, code = runCLI(t, "journal", "events", "default/web-node-1", "--root-dir", d.root)
	if code != 0 || !strings.Contains(out, "snapshot") || !strings.Contains(out, "PodAccepted") || !strings.Contains(out, "attempt=2") {
		t.Fatalf("journal events of web (exit %d):\n%s", code, out)
	}
	out, _, code = runCLI(t, "journal", "events", "default/crash-node-1", "--root-dir", d.root)
	for _, ev := range []string{"PodAccepted", "SandboxRequested", "SandboxCreated", "ContainerStarted", "ContainerExited", "BackOffStarted"} {
		if code != 0 || !strings.Contains(out, ev) {
			t.Fatalf("journal events lacks %s (exit %d):\n%s", ev, code, out)
		}
	}
}
