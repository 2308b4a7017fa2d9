package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestContainerdPods runs static pods on containerd + runc: a two-container
// pod with a pod IP on the CNI bridge that answers HTTP, a hostNetwork pod,
// logs in the kubelet's layout read back from the files and by crictl,
// resource limits and security context as the container sees them, exit
// codes and reasons, restarts with back-off, and graceful termination:
// SIGTERM first, SIGKILL after the grace period.
func TestContainerdPods(t *testing.T) {
	e := needContainerd(t)
	d := e.nodeDirs(t, "ctrd-pods")
	hostPort := freePort(t)
	memFile := "/sys/fs/cgroup/memory.max" // cgroup v2
	if fi, err := os.Stat("/sys/fs/cgroup/memory"); err == nil && fi.IsDir() {
		memFile = "/sys/fs/cgroup/memory/memory.limit_in_bytes" // cgroup v1
	}
	pods := []podSpec{
		{name: "web", containers: []containerSpec{
			{name: "web", args: []string{"-msg", "web up", "-http", ":8080"},
				extra: "    resources: {limits: {cpu: 250m, memory: 64Mi}}\n" +
					"    securityContext: {runAsUser: 1000, readOnlyRootFilesystem: true, capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}}\n"},
			{name: "side", args: []string{"-print-uid", "-cat", memFile, "-print-every", "500ms"},
				extra: "    resources: {limits: {memory: 32Mi}}\n    securityContext: {runAsUser: 1234}\n"},
		}},
		{name: "hostnet", hostNetwork: true, containers: []containerSpec{
			{name: "web", args: []string{"-http", "127.0.0.1:" + hostPort}},
		}},
		{name: "priv", containers: []containerSpec{
			{name: "app", extra: "    securityContext: {privileged: true}\n", args: []string{"-msg", "privileged"}},
		}},
		{name: "job", restartPolicy: "Never", containers: []containerSpec{
			{name: "app", args: []string{"-msg", "job fails", "-exit", "3"}},
		}},
		{name: "done", restartPolicy: "OnFailure", containers: []containerSpec{
			{name: "app", args: []string{"-msg", "job done", "-exit", "0"}},
		}},
		{name: "crash", containers: []containerSpec{
			{name: "app", args: []string{"-msg", "crashing", "-sleep", "100ms", "-exit", "1"}},
		}},
		{name: "polite", grace: 30, containers: []containerSpec{
			{name: "app", args: []string{"-msg", "polite"}},
		}},
		{name: "stubborn", grace: 2, containers: []containerSpec{
			{name: "app", args: []string{"-msg", "stubborn", "-ignore-sigterm"}},
		}},
	}
	for _, p := range pods {
		writeManifest(t, d.manifests, p.name+".yaml", e.manifest(p))
	}
	n := startNode(t, e.endpoint, d)
	pod := func(name string) corev1.Pod { return n.pods(t)["default/"+name+"-"+d.name] }

	// A pod IP on the bridge, both containers running, HTTP answered.
	waitFor(t, "web Running and Ready with a pod IP", func() (bool, string) {
		p := pod("web")
		return p.Status.Phase == corev1.PodRunning && podReady(p) && p.Status.PodIP != "", fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.Conditions)
	})
	web := pod("web")
	if ip := net.ParseIP(web.Status.PodIP); ip == nil || ip.IsLoopback() || web.Status.PodIP == web.Status.HostIP {
		t.Fatalf("web's pod IP %q is not an address of its own", web.Status.PodIP)
	}
	waitFor(t, "web to answer on its pod IP", func() (bool, string) {
		body, err := httpGet("http://" + net.JoinHostPort(web.Status.PodIP, "8080") + "/")
		return err == nil && strings.HasPrefix(body, "ok web-"+d.name), fmt.Sprint(body, err)
	})

	// hostNetwork: the node's address, and the port on the host's loopback.
	waitFor(t, "hostnet Running", func() (bool, string) {
		p := pod("hostnet")
		return p.Status.Phase == corev1.PodRunning && p.Status.PodIP == "127.0.0.1", fmt.Sprintf("%+v", p.Status)
	})
	waitFor(t, "hostnet to answer on the host's loopback", func() (bool, string) {
		body, err := httpGet("http://127.0.0.1:" + hostPort + "/")
		return err == nil && strings.HasPrefix(body, "ok "), fmt.Sprint(body, err)
	})

	// Logs in <podLogsDir>/<ns>_<name>_<uid>/<container>/<restartCount>.log.
	webLogs := filepath.Join(d.logs, fmt.Sprintf("default_web-%s_%s", d.name, web.UID))
	waitFor(t, "web's log file", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(webLogs, "web", "0.log"))
		return err == nil && strings.Contains(string(b), " stdout F web up"), fmt.Sprint(string(b), err)
	})
	webID := containerID(t, web, "web")
	if out := e.crictlOut(t, "logs", webID); !strings.Contains(out, "web up") {
		t.Fatalf("crictl logs %s:\n%s", webID, out)
	}

	// Limits and security context: as passed to runc, and as seen inside.
	spec := runtimeSpec(t, e.crictlOut(t, "inspect", webID))
	if spec.Linux.Resources.Memory.Limit != 64<<20 || spec.Linux.Resources.CPU.Quota != 25000 || spec.Linux.Resources.CPU.Period != 100000 {
		t.Errorf("web's resources in the runtime spec: %+v", spec.Linux.Resources)
	}
	if !spec.Root.Readonly || spec.Process.User.UID != 1000 || !slices.Equal(spec.Process.Capabilities.Effective, []string{"CAP_NET_BIND_SERVICE"}) {
		t.Errorf("web's security in the runtime spec: readonly=%v uid=%d caps=%v", spec.Root.Readonly, spec.Process.User.UID, spec.Process.Capabilities.Effective)
	}
	waitFor(t, "side to print its uid and memory limit", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(webLogs, "side", "0.log"))
		s := string(b)
		return err == nil && strings.Contains(s, "uid=1234") && strings.Contains(s, strconv.Itoa(32<<20)), fmt.Sprint(s, err)
	})
	waitFor(t, "priv Running", func() (bool, string) {
		p := pod("priv")
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	privSpec := runtimeSpec(t, e.crictlOut(t, "inspect", containerID(t, pod("priv"), "app")))
	if !slices.Contains(privSpec.Process.Capabilities.Effective, "CAP_SYS_ADMIN") {
		t.Errorf("privileged container lacks CAP_SYS_ADMIN: %v", privSpec.Process.Capabilities.Effective)
	}
	// oom_score_adj by QoS, as the kubelet sets it: priv is BestEffort (1000);
	// web is Burstable (side has no CPU limit): 1000 - 1000 * its memory
	// request (the 64Mi limit) / the node's memory, within [3, 999].
	if adj := privSpec.Process.OOMScoreAdj; adj == nil || *adj != 1000 {
		t.Errorf("BestEffort container's oomScoreAdj %v, want 1000", adj)
	}
	if adj := spec.Process.OOMScoreAdj; adj == nil || *adj < 3 || *adj > 999 {
		t.Errorf("Burstable container's oomScoreAdj %v, want within [3, 999]", adj)
	}

	// Exit codes and reasons.
	waitFor(t, "job Failed with exit code 3", func() (bool, string) {
		p := pod("job")
		term := terminated(p, "app")
		return p.Status.Phase == corev1.PodFailed && term != nil && term.ExitCode == 3 && term.Reason == "Error", fmt.Sprintf("%s %+v", p.Status.Phase, term)
	})
	waitFor(t, "done Succeeded", func() (bool, string) {
		p := pod("done")
		term := terminated(p, "app")
		return p.Status.Phase == corev1.PodSucceeded && term != nil && term.ExitCode == 0 && term.Reason == "Completed", fmt.Sprintf("%s %+v", p.Status.Phase, term)
	})

	// Restarts with back-off, one log file per restart.
	waitFor(t, "crash restarted twice", func() (bool, string) {
		p := pod("crash")
		if len(p.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		cs := p.Status.ContainerStatuses[0]
		last := cs.LastTerminationState.Terminated
		return cs.RestartCount >= 2 && last != nil && last.ExitCode == 1, fmt.Sprintf("restarts=%d last=%+v", cs.RestartCount, last)
	})
	crash := pod("crash")
	crashLogs := filepath.Join(d.logs, fmt.Sprintf("default_crash-%s_%s", d.name, crash.UID), "app")
	for _, f := range []string{"0.log", "1.log"} {
		if b, err := os.ReadFile(filepath.Join(crashLogs, f)); err != nil || !strings.Contains(string(b), "crashing") {
			t.Errorf("crash's %s: %q %v", f, b, err)
		}
	}

	// Graceful termination: polite exits on SIGTERM, stubborn is killed
	// after its 2 s grace period.
	waitFor(t, "polite and stubborn Running", func() (bool, string) {
		return pod("polite").Status.Phase == corev1.PodRunning && pod("stubborn").Status.Phase == corev1.PodRunning, "not yet"
	})
	removed := time.Now()
	for _, name := range []string{"polite", "stubborn"} {
		if err := os.Remove(filepath.Join(d.manifests, name+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "polite and stubborn gone from containerd", func() (bool, string) {
		views, err := e.client.ListPods(t.Context())
		if err != nil {
			return false, err.Error()
		}
		for _, v := range views {
			if v.Name == "polite-"+d.name || v.Name == "stubborn-"+d.name {
				return false, v.Name + " still there"
			}
		}
		return true, ""
	})
	if took := time.Since(removed); took < 2*time.Second {
		t.Errorf("stubborn ignored SIGTERM yet was gone after %v, before its grace period", took)
	}
	n.stop()
	// The exit is journaled: as the ContainerExited event, or, once the
	// removed pod's events are compacted (the node does that on its own
	// time, which may come after this stop), in the snapshot's container.
	for name, code := range map[string]string{"polite": "0", "stubborn": "137"} {
		want := regexp.MustCompile(`(?m)EXITED exit_code=` + code + `\b|ContainerExited\s.*\sexit_code=` + code + `\b`)
		out, _, rc := runCLI(t, "journal", "events", "default/"+name+"-"+d.name, "--root-dir", d.root)
		if rc != 0 || !want.MatchString(out) {
			t.Errorf("journal events of %s lack its exit with code %s (exit %d):\n%s", name, code, rc, out)
		}
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func terminated(p corev1.Pod, container string) *corev1.ContainerStateTerminated {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.State.Terminated
		}
	}
	return nil
}

// containerID is the runtime's ID of a container of the pod (without the
// "containerd://" of the status).
func containerID(t *testing.T, p corev1.Pod, container string) string {
	t.Helper()
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container && cs.ContainerID != "" {
			_, id, _ := strings.Cut(cs.ContainerID, "://")
			return id
		}
	}
	t.Fatalf("pod %s has no container ID for %s: %+v", p.Name, container, p.Status.ContainerStatuses)
	return ""
}

// ociSpec is the part of the OCI runtime spec the tests look at.
type ociSpec struct {
	Root    struct{ Readonly bool }
	Process struct {
		User         struct{ UID uint32 }
		Capabilities struct{ Effective []string }
		OOMScoreAdj  *int `json:"oomScoreAdj"`
	}
	Linux struct {
		CgroupsPath string `json:"cgroupsPath"`
		Resources   struct {
			Memory struct{ Limit int64 }
			CPU    struct {
				Quota  int64
				Period uint64
			}
		}
	}
}

// runtimeSpec reads the OCI spec from `crictl inspect` output.
func runtimeSpec(t *testing.T, inspect string) ociSpec {
	t.Helper()
	var out struct {
		Info struct {
			RuntimeSpec ociSpec `json:"runtimeSpec"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(inspect), &out); err != nil {
		t.Fatalf("decode crictl inspect: %v\n%s", err, inspect)
	}
	return out.Info.RuntimeSpec
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func httpGet(url string) (string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
