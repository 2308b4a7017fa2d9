package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContainerdThroughCRIProxy puts `actorlet cri-proxy` in front of the
// real containerd. Without faults, crictl (a CRI client actorlet did not
// write) drives a pod's whole life through it, exec included: Exec answers
// containerd's streaming URL and crictl streams from containerd directly.
// With the default faults, the kill -9 churn (3 kills) runs through it and
// containerd itself, asked directly, must show every desired pod with one
// ready sandbox and one running container, restart counts never going
// down, and nothing left at the end. A steady container may be replaced
// here, visibly (its restart count grows): a restart of the proxy cuts a
// StartContainer in flight, and containerd leaves that container EXITED
// with StartError, which is a failed start that the node retries with a
// new attempt, as the kubelet does.
func TestContainerdThroughCRIProxy(t *testing.T) {
	e := needContainerd(t)
	dir := t.TempDir()

	px := startCRIProxy(t, dir, e.endpoint, "--faults", "none")
	via := *e
	via.endpoint = px.endpoint
	if v := via.crictlOut(t, "version"); !strings.Contains(v, "containerd") {
		t.Fatalf("crictl version through the proxy: %s", v)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	podCfg := write("pod.json", fmt.Sprintf(`{"metadata":{"name":"viaproxy","namespace":"criproxy","uid":"uid-viaproxy","attempt":0},"log_directory":%q}`,
		filepath.Join(dir, "podlogs")))
	ctrCfg := write("ctr.json", fmt.Sprintf(`{"metadata":{"name":"app"},"image":{"image":%q},"args":["-msg","started"],"log_path":"app.log"}`, e.workload))
	podID := strings.TrimSpace(via.crictlOut(t, "runp", podCfg))
	t.Cleanup(func() {
		_ = e.client.StopPodSandbox(context.Background(), podID)
		_ = e.client.RemovePodSandbox(context.Background(), podID)
	})
	ctrID := strings.TrimSpace(via.crictlOut(t, "create", podID, ctrCfg, podCfg))
	via.crictlOut(t, "start", ctrID)
	if ps := via.crictlOut(t, "ps", "-q", "--state", "running", "--pod", podID); strings.TrimSpace(ps) != ctrID {
		t.Fatalf("crictl ps through the proxy: %q, want %s", ps, ctrID)
	}
	if out := via.crictlOut(t, "exec", "-s", ctrID, "/workload", "-msg", "exec-through-proxy", "-exit", "0"); !strings.Contains(out, "exec-through-proxy") {
		t.Fatalf("crictl exec through the proxy: %q", out)
	}
	via.crictlOut(t, "stopp", podID)
	via.crictlOut(t, "rmp", podID)
	if pods := via.crictlOut(t, "pods", "-q", "--namespace", "criproxy"); strings.TrimSpace(pods) != "" {
		t.Fatalf("pods left after rmp: %q", pods)
	}
	px.stop()

	px = startCRIProxy(t, t.TempDir(), e.endpoint, "--faults", "default", "--seed", faultSeed(t))
	d := e.nodeDirs(t, "ctrd-proxy")
	runChurn(t, churnRuntime{
		endpoint: px.endpoint, client: e.client,
		manifest: func(name string, crash bool) string {
			args := []string{"-msg", "steady"}
			if crash {
				args = []string{"-msg", "crashing", "-sleep", "200ms", "-exit", "1"}
			}
			return e.manifest(podSpec{name: name, containers: []containerSpec{{name: "app", args: args}}})
		},
		extra:         []string{"--runtime-request-timeout", "10s"},
		failedStarts:  true,
		strandedTasks: true,
	}, d, 3)
	report := px.stopReport(t)
	t.Logf("faults injected: %v", report)
	if report["error"]+report["error-after"] == 0 {
		t.Errorf("no errors injected: %v", report)
	}
}
