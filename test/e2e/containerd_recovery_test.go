package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/cri"
)

// TestContainerdCrashRecovery is TestCrashRecoveryKill9 on containerd: at
// least 10 pods churned (adds, removals, crashing containers), actorlet
// killed with SIGKILL 20 times at random points, and after each restart
// containerd itself must show exactly one ready sandbox per desired pod,
// running containers kept (same IDs, restart counts unchanged), nothing
// that no pod owns, and a journal that verifies.
func TestContainerdCrashRecovery(t *testing.T) {
	e := needContainerd(t)
	d := e.nodeDirs(t, "ctrd-churn")
	runChurn(t, churnRuntime{
		endpoint: e.endpoint, client: e.client,
		manifest: func(name string, crash bool) string {
			args := []string{"-msg", "steady"}
			if crash {
				args = []string{"-msg", "crashing", "-sleep", "200ms", "-exit", "1"}
			}
			return e.manifest(podSpec{name: name, containers: []containerSpec{{name: "app", args: args}}})
		},
	}, d, 20)
}

// TestContainerdRestart restarts containerd under a running actorlet: the
// pods' containers keep running (containerd's shims outlive it), actorlet
// notices nothing to redo, takes new pods once containerd is back, and
// watches it again as before (events from containerd 2.x, a relist from 1.6).
func TestContainerdRestart(t *testing.T) {
	e := needContainerd(t)
	d := e.nodeDirs(t, "ctrd-restart")
	for _, name := range []string{"a", "b"} {
		writeManifest(t, d.manifests, name+".yaml", e.manifest(podSpec{name: name, containers: []containerSpec{{name: "app"}}}))
	}
	// With events, relisting is left to an hour from now: whatever
	// actorlet notices comes from containerd's event stream.
	mode, flags := cri.ModeRelist, []string(nil)
	if e.servesEvents() {
		mode, flags = cri.ModeEvents, []string{"--relist-period", "1h"}
	}
	n := startNode(t, e.endpoint, d, flags...)
	pod := func(name string) corev1.Pod { return n.pods(t)["default/"+name+"-"+d.name] }
	before := map[string]string{}
	waitFor(t, "a and b Running", func() (bool, string) {
		for _, name := range []string{"a", "b"} {
			p := pod(name)
			if p.Status.Phase != corev1.PodRunning {
				return false, name + " " + string(p.Status.Phase)
			}
			before[name] = containerID(t, p, "app")
		}
		return true, ""
	})
	watching := func() int { return countLogs(n.output(), "runtime watch mode", "mode", mode) }
	waitFor(t, "actorlet to watch containerd in "+mode+" mode", func() (bool, string) { return watching() == 1, "" })

	e.run(t, "stop-containerd")
	writeManifest(t, d.manifests, "c.yaml", e.manifest(podSpec{name: "c", containers: []containerSpec{{name: "app"}}}))
	e.run(t, "start-containerd")
	e.waitUp(t)
	if e.servesEvents() {
		waitFor(t, "actorlet to subscribe to containerd's events again", func() (bool, string) { return watching() == 2, "" })
	}

	waitFor(t, "c Running after containerd came back", func() (bool, string) {
		p := pod("c")
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	views, err := e.client.ListPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for name, id := range before {
		found := false
		for _, v := range views {
			if v.Name != name+"-"+d.name {
				continue
			}
			for _, c := range v.Containers {
				if c.ID == id && c.State == cri.ContainerRunning && len(v.Containers) == 1 {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("pod %s's container %s did not keep running alone across the containerd restart", name, id)
		}
		if rc := pod(name).Status.ContainerStatuses[0].RestartCount; rc != 0 {
			t.Errorf("pod %s: restart count %d after the containerd restart", name, rc)
		}
	}
	if e.servesEvents() {
		// A crash is seen through the new subscription: no relist comes
		// for an hour.
		writeManifest(t, d.manifests, "crash.yaml", e.manifest(podSpec{name: "crash", containers: []containerSpec{
			{name: "app", args: []string{"-sleep", "100ms", "-exit", "1"}}}}))
		waitFor(t, "crash restarted twice with only events to tell", func() (bool, string) {
			p := pod("crash")
			if len(p.Status.ContainerStatuses) == 0 {
				return false, "no status"
			}
			return p.Status.ContainerStatuses[0].RestartCount >= 2, fmt.Sprint(p.Status.ContainerStatuses[0].RestartCount)
		})
	}
	n.stop()
}

// countLogs counts the JSON log lines with this msg and key=value.
func countLogs(out, msg, key, value string) int {
	k := 0
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg && m[key] == value {
			k++
		}
	}
	return k
}
