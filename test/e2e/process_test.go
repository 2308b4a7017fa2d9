package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
)

// proc is a child process whose stderr is kept for the test.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	// lines receives every stderr line until the process ends.
	lines chan string
}

func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: exec.Command(binary, args...), done: make(chan struct{}), lines: make(chan string, 4096)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- line:
			default:
			}
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("--- %s output (tail) ---\n%s", name, tail(p.output(), 60))
		}
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// stop sends SIGTERM and waits.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Errorf("%s did not stop on SIGTERM", p.name)
		p.kill()
	}
}

// waitLog waits for a JSON log line whose msg is msg and returns it decoded.
func (p *proc) waitLog(msg string) map[string]any {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line := <-p.lines:
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
				return m
			}
		case <-p.done:
			p.t.Fatalf("%s exited before logging %q:\n%s", p.name, msg, tail(p.output(), 40))
		case <-deadline:
			p.t.Fatalf("%s did not log %q in time", p.name, msg)
		}
	}
}

// simRuntime is `actorlet sim-runtime` on a socket in the test's temp dir.
type simRuntime struct {
	*proc
	endpoint string
	client   *cri.Client
}

func startSim(t *testing.T, dir string, extra ...string) *simRuntime {
	t.Helper()
	sock := filepath.Join(dir, "sim.sock")
	endpoint := "unix://" + sock
	p := startProc(t, "sim-runtime", append([]string{"sim-runtime", "--listen", endpoint}, extra...)...)
	p.waitLog("simulated runtime serving")
	client, err := cri.Dial(context.Background(), endpoint, "", cri.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	waitFor(t, "the simulated runtime to answer", func() (bool, string) {
		_, err := client.Version(context.Background())
		return err == nil, fmt.Sprint(err)
	})
	return &simRuntime{proc: p, endpoint: endpoint, client: client}
}

// violations returns the CRI misuse the simulated runtime saw.
func (s *simRuntime) violations(t *testing.T) []string {
	t.Helper()
	st, err := s.client.Status(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	var info sim.Info
	if err := json.Unmarshal([]byte(st.GetInfo()[sim.InfoKey]), &info); err != nil {
		t.Fatalf("decode sim info: %v", err)
	}
	return info.Violations
}

// node is one `actorlet run` process. url is its read-only port (the
// kubelet's 10255: /pods, /metrics, /stats/summary, /healthz), which
// pods and get read; healthURL its health port (/healthz only).
type node struct {
	*proc
	url, healthURL string
}

// localPortArgs are the flags every test node runs with: the health port
// and the read-only port on loopback. The read-only port's 0 means off, as
// in the kubelet, so a free port is picked here.
func localPortArgs(t *testing.T) []string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return []string{"--healthz-port", "0", "--read-only-port", strconv.Itoa(port)}
}

// nodeFromLog is the node whose "actorlet is running" line is m.
func nodeFromLog(t *testing.T, p *proc, m map[string]any) *node {
	t.Helper()
	ro, _ := m["readOnly"].(string)
	if ro == "" || ro == "off" {
		t.Fatalf("node runs without its read-only port (readOnly %q)", ro)
	}
	return &node{proc: p, url: "http://" + ro, healthURL: "http://" + m["healthz"].(string)}
}

// nodeDirs are one node's directories and name (static pods are named
// <manifest name>-<node name>).
type nodeDirs struct {
	name, root, manifests, logs string
}

func newNodeDirs(t *testing.T) nodeDirs {
	d := t.TempDir()
	// Runs before the TempDir's removal: pods still running when a test
	// ends keep their tmpfs volumes mounted, as on a real node.
	t.Cleanup(func() { unmountUnder(t, d) })
	nd := nodeDirs{name: "node-1", root: filepath.Join(d, "root"), manifests: filepath.Join(d, "manifests"), logs: filepath.Join(d, "logs")}
	if err := os.MkdirAll(nd.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	return nd
}

// startNode starts `actorlet run` on the runtime at endpoint and waits until
// it is running.
func startNode(t *testing.T, endpoint string, d nodeDirs, extra ...string) *node {
	t.Helper()
	args := append([]string{"run",
		"--container-runtime-endpoint", endpoint,
		"--pod-manifest-path", d.manifests,
		"--root-dir", d.root,
		"--pod-logs-dir", d.logs,
		"--hostname-override", d.name,
		"--file-check-frequency", "1s",
		"--relist-period", "200ms",
		"--crashloop-backoff-initial", "200ms",
		"--crashloop-backoff-max", "1s",
		"--port", "0", // the kubelet API (with --kubeconfig): any free port
	}, localPortArgs(t)...)
	args = append(args, extra...)
	p := startProc(t, "actorlet", args...)
	m := p.waitLog("actorlet is running")
	return nodeFromLog(t, p, m)
}

func (n *node) pods(t *testing.T) map[string]corev1.Pod {
	t.Helper()
	resp, err := http.Get(n.url + "/pods")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("decode /pods: %v", err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range list.Items {
		out[p.Namespace+"/"+p.Name] = p
	}
	return out
}

// statusOf is the status code of a GET of url.
func statusOf(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// get reads path from the node's read-only port.
func (n *node) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(n.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitFor polls cond every 20ms until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	waitWithin(t, time.Minute, what, cond)
}

// waitWithin is waitFor with a deadline of its own, for what depends on
// back-offs longer than waitFor's minute leaves room for.
func waitWithin(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	waitEvery(t, within, 20*time.Millisecond, what, cond)
}

// waitEvery is waitWithin checking every period, for conditions that are
// costly to check (a list of a thousand pods).
func waitEvery(t *testing.T, within, period time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(period)
	defer tick.Stop()
	last := ""
	for {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %s", what, last)
		}
		<-tick.C
	}
}

// runCLI runs actorlet with args and returns its stdout, stderr and exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func writeManifest(t *testing.T, dir, file, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
}

func podManifest(name string, env map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  terminationGracePeriodSeconds: 2\n  containers:\n  - name: app\n    image: example.com/app:1\n", name)
	if len(env) > 0 {
		b.WriteString("    env:\n")
		for k, v := range env {
			fmt.Fprintf(&b, "    - {name: %s, value: %q}\n", k, v)
		}
	}
	return b.String()
}

// unmountUnder detaches every mount below dir (deepest first).
func unmountUnder(t *testing.T, dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", p, err)
		}
	}
}
