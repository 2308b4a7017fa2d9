package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestContainerdProbesHooksInit runs the pod features of issue 5 that are
// real only on a real runtime, on containerd + runc:
//   - a postStart hook (exec) writes a file that an exec readiness probe
//     reads: the pod is Ready only after the hook ran in the container;
//   - an httpGet readiness probe on the pod IP;
//   - an httpGet liveness probe that can never pass restarts its container
//     with back-off;
//   - a regular init container completes before the app starts, and a
//     sidecar keeps running (same container, no restart) while the app
//     container crashes and restarts;
//   - an init container writes into an emptyDir what the app container
//     reads;
//   - /etc/hosts with the pod's IP and its hostAliases;
//   - termination messages: the file's, and the log's tail on error;
//   - a preStop hook (exec) writes into a hostPath the file the test reads
//     once the pod is gone; a sidecar's postStart hook (httpGet) calls a
//     server of the test on the host's loopback, once.
func TestContainerdProbesHooksInit(t *testing.T) {
	e := needContainerd(t)
	d := e.nodeDirs(t, "ctrd-feat")
	// The postStart hook of "sidecar" calls this server on the host's
	// loopback; probed's preStop writes into a hostPath read after the pod.
	var postStarts atomic.Int32
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/poststart" {
			postStarts.Add(1)
		}
	}))
	defer hookSrv.Close()
	hookURL, err := url.Parse(hookSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	hooksDir := t.TempDir()
	always := "    restartPolicy: Always\n"
	workMount := "    volumeMounts: [{name: work, mountPath: /work}]\n"
	pods := []podSpec{
		{name: "probed", grace: 10, extra: fmt.Sprintf("  volumes: [{name: hooks, hostPath: {path: %s, type: Directory}}]\n", hooksDir), containers: []containerSpec{
			{name: "web", args: []string{"-msg", "probed up", "-http", ":8080"}, extra: "" +
				"    lifecycle:\n" +
				"      postStart: {exec: {command: [/workload, -write, /poststart=done, -exit, \"0\"]}}\n" +
				"      preStop: {exec: {command: [/workload, -write, /hooks/prestop=stopped-gracefully, -exit, \"0\"]}}\n" +
				"    volumeMounts: [{name: hooks, mountPath: /hooks}]\n" +
				"    readinessProbe: {exec: {command: [/workload, -cat, /poststart, -exit, \"0\"]}, periodSeconds: 1}\n" +
				"    startupProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1, failureThreshold: 30}\n"},
		}},
		{name: "unhealthy", containers: []containerSpec{
			{name: "app", args: []string{"-msg", "unhealthy up"}, extra: "" +
				"    livenessProbe: {httpGet: {path: /healthz, port: 9999}, periodSeconds: 1, failureThreshold: 1}\n"},
		}},
		{name: "init", initContainers: []containerSpec{
			{name: "setup", args: []string{"-msg", "setup done", "-sleep", "200ms", "-exit", "0"}},
			{name: "proxy", args: []string{"-msg", "proxy up", "-print-every", "1s"}, extra: always +
				fmt.Sprintf("    lifecycle: {postStart: {httpGet: {host: 127.0.0.1, port: %s, path: /poststart}}}\n", hookURL.Port())},
		}, containers: []containerSpec{
			{name: "app", args: []string{"-msg", "app crashing", "-sleep", "300ms", "-exit", "1"}},
		}},
		{name: "shared", extra: "  volumes: [{name: work, emptyDir: {}}]\n  hostAliases: [{ip: 10.9.8.7, hostnames: [db.example, db]}]\n", initContainers: []containerSpec{
			{name: "produce", args: []string{"-write", "/work/out=from-init", "-exit", "0"}, extra: workMount},
		}, containers: []containerSpec{
			{name: "consume", args: []string{"-cat", "/work/out", "-print-every", "1s"}, extra: workMount},
		}},
		{name: "farewell", restartPolicy: "Never", containers: []containerSpec{
			{name: "file", args: []string{"-write", "/dev/termination-log=bye now", "-exit", "3"}},
			{name: "logs", args: []string{"-msg", "last words", "-exit", "4"}, extra: "    terminationMessagePolicy: FallbackToLogsOnError\n"},
		}},
	}
	for _, p := range pods {
		writeManifest(t, d.manifests, p.name+".yaml", e.manifest(p))
	}
	n := startNode(t, e.endpoint, d)
	pod := func(name string) corev1.Pod { return n.pods(t)["default/"+name+"-"+d.name] }
	status := func(p corev1.Pod, name string) (corev1.ContainerStatus, bool) {
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if cs.Name == name {
				return cs, true
			}
		}
		return corev1.ContainerStatus{}, false
	}

	// postStart -> readiness exec; startup httpGet gates it.
	waitFor(t, "probed Ready (its postStart wrote what its readiness probe reads)", func() (bool, string) {
		p := pod("probed")
		return p.Status.Phase == corev1.PodRunning && podReady(p), fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
	probedID := containerID(t, pod("probed"), "web")
	if out := e.crictlOut(t, "exec", probedID, "/workload", "-cat", "/poststart", "-exit", "0"); !strings.Contains(out, "done") {
		t.Fatalf("the postStart file in the container: %q", out)
	}

	// Liveness failing: restarted, with back-off between the restarts.
	sawBackOff := false
	waitFor(t, "unhealthy restarted twice by its liveness probe", func() (bool, string) {
		cs, _ := status(pod("unhealthy"), "app")
		if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
			sawBackOff = true
		}
		return cs.RestartCount >= 2 && sawBackOff, fmt.Sprintf("%+v", cs)
	})

	// Init: setup completed before app started; the sidecar outlives the
	// app's restarts.
	var proxyID string
	waitFor(t, "init's app restarted while its sidecar runs", func() (bool, string) {
		p := pod("init")
		setup, _ := status(p, "setup")
		proxy, _ := status(p, "proxy")
		app, _ := status(p, "app")
		if proxy.State.Running != nil && proxyID == "" {
			proxyID = proxy.ContainerID
		}
		ok := setup.State.Terminated != nil && setup.State.Terminated.ExitCode == 0 &&
			proxy.State.Running != nil && app.RestartCount >= 2
		return ok, fmt.Sprintf("setup %+v proxy %+v app %+v", setup.State, proxy.State, app)
	})
	p := pod("init")
	setup, _ := status(p, "setup")
	proxy, _ := status(p, "proxy")
	app, _ := status(p, "app")
	if proxy.ContainerID != proxyID || proxy.RestartCount != 0 {
		t.Fatalf("the sidecar was restarted: %+v (first seen as %s)", proxy, proxyID)
	}
	if lt := app.LastTerminationState.Terminated; lt == nil || lt.StartedAt.Before(&setup.State.Terminated.FinishedAt) {
		t.Fatalf("app ran before its init container finished: app %+v, setup %+v", app.LastTerminationState, setup.State.Terminated)
	}
	if c := condition(p, corev1.PodInitialized); c != corev1.ConditionTrue {
		t.Fatalf("init's Initialized condition %s", c)
	}

	// An init container's output, read by the app from a shared emptyDir.
	waitFor(t, "consume printing what produce wrote", func() (bool, string) {
		p := pod("shared")
		if cs, ok := status(p, "consume"); !ok || cs.State.Running == nil {
			return false, fmt.Sprintf("%+v", p.Status)
		}
		out := e.crictlOut(t, "logs", containerID(t, p, "consume"))
		return strings.Contains(out, "from-init"), out
	})

	// /etc/hosts: the pod's IP and name, and its hostAliases.
	shared := pod("shared")
	hosts := e.crictlOut(t, "exec", containerID(t, shared, "consume"), "/workload", "-cat", "/etc/hosts", "-exit", "0")
	if !strings.Contains(hosts, shared.Status.PodIP+"\tshared-"+d.name) || !strings.Contains(hosts, "10.9.8.7\tdb.example\tdb") {
		t.Fatalf("/etc/hosts of shared:\n%s", hosts)
	}

	// Termination messages: from the file, and from the log on error.
	waitFor(t, "farewell's termination messages", func() (bool, string) {
		p := pod("farewell")
		file, logs := terminated(p, "file"), terminated(p, "logs")
		return file != nil && logs != nil && file.Message == "bye now" && strings.TrimSpace(logs.Message) == "last words",
			fmt.Sprintf("file %+v logs %+v", file, logs)
	})

	// preStop: removing the manifest stops probed; its hook ran first.
	removeManifest(t, d.manifests, "probed.yaml")
	waitFor(t, "probed gone", func() (bool, string) {
		_, ok := n.pods(t)["default/probed-"+d.name]
		return !ok, "still listed"
	})
	if b, err := os.ReadFile(filepath.Join(hooksDir, "prestop")); err != nil || string(b) != "stopped-gracefully" {
		t.Fatalf("the file probed's preStop hook writes: %q, %v", b, err)
	}
	if n := postStarts.Load(); n != 1 {
		t.Fatalf("the sidecar's httpGet postStart hook was called %d times, want 1", n)
	}
}

func condition(p corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
