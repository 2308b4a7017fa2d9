package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSecondNodeOnSameRootDir: a second actorlet on a root dir in use fails
// at once with an error naming the lock, instead of hanging.
func TestSecondNodeOnSameRootDir(t *testing.T) {
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	n := startNode(t, s.endpoint, d)
	defer n.stop()
	_, errOut, code := runCLI(t, "run", "--container-runtime-endpoint", s.endpoint, "--root-dir", d.root,
		"--hostname-override", "node-1", "--healthz-port", "0")
	if code == 0 || !strings.Contains(errOut, "locked by another actorlet process") {
		t.Fatalf("second node: exit %d, stderr:\n%s", code, tail(errOut, 10))
	}
	// The journal commands read the running node's journal through the
	// copy it serves on <root>/journal.sock.
	out, errOut, code := runCLI(t, "journal", "pods", "-o", "json", "--root-dir", d.root)
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Fatalf("journal pods on a running node: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "journal", "verify", "--root-dir", d.root); code != 0 || !strings.Contains(out, "is sound") {
		t.Fatalf("journal verify on a running node: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

// TestCorruptJournalIsQuarantined: a damaged journal file is renamed aside
// and reported; the node starts anyway, adopts nothing it cannot explain and
// runs its static pods.
func TestCorruptJournalIsQuarantined(t *testing.T) {
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	writeManifest(t, d.manifests, "web.yaml", podManifest("web", nil))
	n := startNode(t, s.endpoint, d)
	waitFor(t, "web Running", func() (bool, string) {
		p, ok := n.pods(t)["default/web-node-1"]
		return ok && p.Status.Phase == corev1.PodRunning, "not yet"
	})
	n.stop()
	if _, errOut, code := runCLI(t, "journal", "verify", "--root-dir", d.root); code != 0 {
		t.Fatalf("verify of a sound journal: exit %d: %s", code, errOut)
	}
	db := filepath.Join(d.root, "journal.db")
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, "journal", "verify", "--root-dir", d.root); code == 0 {
		t.Fatal("journal verify accepts a corrupt journal")
	}

	n = startNode(t, s.endpoint, d)
	defer n.stop()
	if !strings.Contains(n.output(), "QUARANTINED") {
		t.Fatalf("no loud report of the quarantine:\n%s", tail(n.output(), 20))
	}
	moved, _ := filepath.Glob(db + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("quarantined files: %v", moved)
	}
	if b, err := os.ReadFile(moved[0]); err != nil || string(b) != string(garbage) {
		t.Fatalf("the quarantined file was not kept intact: %v", err)
	}
	waitFor(t, "web Running again with one sandbox", func() (bool, string) {
		p, ok := n.pods(t)["default/web-node-1"]
		if !ok || p.Status.Phase != corev1.PodRunning {
			return false, "not running"
		}
		views, err := s.client.ListPods(t.Context())
		if err != nil {
			return false, err.Error()
		}
		v := views[string(p.UID)]
		return v != nil && len(v.Sandboxes) == 1 && len(v.Containers) == 1, "objects still being replaced"
	})
	if v := s.violations(t); len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}

// TestNodeWaitsForRuntime: a node started before its runtime waits for it,
// as the kubelet does, and runs its pods once it answers.
func TestNodeWaitsForRuntime(t *testing.T) {
	dir := t.TempDir()
	d := newNodeDirs(t)
	writeManifest(t, d.manifests, "web.yaml", podManifest("web", nil))
	endpoint := "unix://" + filepath.Join(dir, "sim.sock")
	p := startProc(t, "actorlet", append([]string{"run", "--container-runtime-endpoint", endpoint, "--pod-manifest-path", d.manifests,
		"--root-dir", d.root, "--pod-logs-dir", d.logs, "--hostname-override", "node-1"}, localPortArgs(t)...)...)
	p.waitLog("waiting for the container runtime")
	s := startSim(t, dir)
	if s.endpoint != endpoint {
		t.Fatalf("sim at %s, node waits for %s", s.endpoint, endpoint)
	}
	m := p.waitLog("actorlet is running")
	n := nodeFromLog(t, p, m)
	defer n.stop()
	waitFor(t, "web Running", func() (bool, string) {
		pod, ok := n.pods(t)["default/web-node-1"]
		return ok && pod.Status.Phase == corev1.PodRunning, "not yet"
	})
}
