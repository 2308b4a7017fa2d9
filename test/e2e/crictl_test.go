package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrictlDrivesSimRuntime drives `actorlet sim-runtime` with crictl
// (sigs.k8s.io/cri-tools), a CRI client actorlet did not write. crictl comes
// from $ACTORLET_CRICTL or PATH; CI builds it (.ci/run), so there it must be
// present.
func TestCrictlDrivesSimRuntime(t *testing.T) {
	crictl := os.Getenv("ACTORLET_CRICTL")
	if crictl == "" {
		var err error
		if crictl, err = exec.LookPath("crictl"); err != nil {
			if os.Getenv("CI") != "" || os.Getenv("ACTORLET_E2E_REQUIRE_CONTAINERD") != "" {
				t.Fatal("crictl is needed in CI and by make test: .ci/run and test/e2e/env.sh build it and set ACTORLET_CRICTL")
			}
			t.Skip("no crictl (set ACTORLET_CRICTL); CI runs this test")
		}
	}
	dir := t.TempDir()
	s := startSim(t, dir)
	cfg := filepath.Join(dir, "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("runtime-endpoint: "+s.endpoint+"\nimage-endpoint: "+s.endpoint+"\ntimeout: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(crictl, append([]string{"--config", cfg}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("crictl %v: %v\n%s", args, err, msg)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	podCfg := write("pod.json", `{"metadata":{"name":"hello","namespace":"crictl","uid":"uid-crictl","attempt":1},"labels":{"io.kubernetes.pod.uid":"uid-crictl"}}`)
	ctrCfg := write("ctr.json", `{"metadata":{"name":"app"},"image":{"image":"docker.io/library/busybox:1.36"},"envs":[{"key":"SIM_EXIT_AFTER","value":"1h"}]}`)

	if v := run("version"); !strings.Contains(v, "actorlet-sim") {
		t.Fatalf("crictl version: %s", v)
	}
	run("pull", "docker.io/library/busybox:1.36")
	podID := run("runp", podCfg)
	ctrID := run("create", podID, ctrCfg, podCfg)
	run("start", ctrID)
	if ps := run("ps", "-q", "--state", "running"); ps != ctrID {
		t.Fatalf("crictl ps: %q, want %q", ps, ctrID)
	}
	var insp struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(run("inspect", "-o", "json", ctrID)), &insp); err != nil || insp.Status.State != "CONTAINER_RUNNING" {
		t.Fatalf("crictl inspect: state %q, err %v", insp.Status.State, err)
	}
	run("stopp", podID)
	run("rmp", podID)
	if pods := run("pods", "-q"); pods != "" {
		t.Fatalf("pods left after rmp: %q", pods)
	}
	if v := s.violations(t); len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}
