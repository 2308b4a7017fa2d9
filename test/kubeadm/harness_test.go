package kubeadm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The namespaces and addresses of kubeadm.sh.
const (
	k8sVersion = "v1.37.2"
	cpIP       = "10.88.104.1"
	workerIP   = "10.88.104.2"
)

// env is what the test runs: the tools cluster.sh and env.sh built, the
// actorlet binary (also named kubelet), kubeadm.sh.
type env struct {
	t      *testing.T
	root   string // the repository
	tools  string // $ACTORLET_TOOLS
	bin    string // the k8s binaries
	prefix string // $ACTORLET_KUBEADM_PREFIX
	script string // test/kubeadm/kubeadm.sh
	kbin   string // a directory with actorlet and kubelet -> actorlet
	logs   string // logs of kubeadm and the node agents
}

// newEnv checks what the test needs. Without it the test skips, unless
// ACTORLET_E2E_REQUIRE_CONTAINERD=1 (CI), where it fails with the reason.
func newEnv(t *testing.T) *env {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("ACTORLET_E2E_REQUIRE_CONTAINERD") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if os.Geteuid() != 0 {
		missing("kubeadm test needs root (network and mount namespaces)")
	}
	tools := os.Getenv("ACTORLET_TOOLS")
	if tools == "" {
		tools = "/var/cache/actorlet-tools"
	}
	e := &env{t: t, tools: tools, bin: filepath.Join(tools, "k8s-"+k8sVersion)}
	for _, b := range []string{"kubeadm", "kubectl", "kube-apiserver", "etcd", "../containerd-v2.4.2/containerd", "../crictl-v1.37.0"} {
		if _, err := os.Stat(filepath.Join(e.bin, b)); err != nil {
			missing("%s: run `test/e2e/cluster.sh install kubeadm` and `test/e2e/env.sh install` first", err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	e.root = filepath.Clean(filepath.Join(wd, "../.."))
	e.script = filepath.Join(e.root, "test/kubeadm/kubeadm.sh")
	e.prefix = os.Getenv("ACTORLET_KUBEADM_PREFIX")
	if e.prefix == "" {
		e.prefix = "/tmp/alk-kubeadm"
	}
	e.logs = filepath.Join(e.prefix, "logs")
	e.kbin = filepath.Join(e.prefix, "bin")
	if err := os.RemoveAll(e.logs); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{e.logs, e.kbin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(e.kbin, "actorlet"), "./cmd/actorlet")
	build.Dir = e.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building actorlet: %v\n%s", err, out)
	}
	_ = os.Remove(filepath.Join(e.kbin, "kubelet"))
	if err := os.Symlink("actorlet", filepath.Join(e.kbin, "kubelet")); err != nil {
		t.Fatal(err)
	}
	return e
}

// sh runs kubeadm.sh with args and fails the test on error.
func (e *env) sh(args ...string) string {
	e.t.Helper()
	out, err := e.shErr(args...)
	if err != nil {
		e.t.Fatalf("kubeadm.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *env) shErr(args ...string) (string, error) {
	cmd := exec.Command(e.script, args...)
	cmd.Env = append(os.Environ(), "ACTORLET_KUBEADM_PREFIX="+e.prefix, "ACTORLET_TOOLS="+e.tools)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// inNode is a command that runs in node's namespaces, with the kubelet
// (actorlet) first on its PATH, as kubeadm finds it.
func (e *env) inNode(ctx context.Context, node string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.script, append([]string{"exec", node}, args...)...)
	cmd.Env = append(os.Environ(), "ACTORLET_KUBEADM_PREFIX="+e.prefix, "ACTORLET_TOOLS="+e.tools,
		"PATH="+e.kbin+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	return cmd
}

// file is the path, seen from the host, of a file the node wrote under
// /etc, /var or /usr (its overlays' upper directories).
func (e *env) file(node, path string) string {
	top, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return filepath.Join(e.prefix, node, top, "upper", rest)
}

// nodeFile is file for a path that may be a symbolic link, followed as the
// node sees it.
func (e *env) nodeFile(node, path string) string {
	p := e.file(node, path)
	if target, err := os.Readlink(p); err == nil {
		if filepath.IsAbs(target) {
			return e.file(node, target)
		}
		return filepath.Join(filepath.Dir(p), target)
	}
	return p
}

// kubectl runs kubectl in the control plane's namespaces as the cluster's
// admin.
func (e *env) kubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(e.t.Context(), 2*time.Minute)
	defer cancel()
	cmd := e.inNode(ctx, "cp", append([]string{filepath.Join(e.bin, "kubectl"), "--kubeconfig", "/etc/kubernetes/admin.conf",
		"--request-timeout", "20s"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), err
}

func (e *env) mustKubectl(args ...string) string {
	e.t.Helper()
	out, err := e.kubectl(args...)
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// crictl runs crictl against node's containerd.
func (e *env) crictl(node string, args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), time.Minute)
	defer cancel()
	sock := "unix:///tmp/alk-" + node + "/containerd.sock"
	out, err := e.inNode(ctx, node, append([]string{filepath.Join(e.tools, "crictl-v1.37.0"), "--runtime-endpoint", sock,
		"--image-endpoint", sock}, args...)...).Output()
	if err != nil {
		e.t.Fatalf("crictl %s on %s: %v", strings.Join(args, " "), node, err)
	}
	return string(out)
}

// kubeletArgs is the kubelet's command line as kubeadm's systemd drop-in
// (10-kubeadm.conf) makes it: the kubeconfigs and config file, then
// KUBELET_KUBEADM_ARGS from /var/lib/kubelet/kubeadm-flags.env and
// KUBELET_EXTRA_ARGS from /etc/default/kubelet, if any.
func (e *env) kubeletArgs(node string) []string {
	e.t.Helper()
	args := []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml"}
	for _, f := range []struct{ path, name string }{{"/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS"}, {"/etc/default/kubelet", "KUBELET_EXTRA_ARGS"}} {
		b, err := os.ReadFile(e.file(node, f.path))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			e.t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), f.name+"="); ok {
				args = append(args, strings.Fields(strings.Trim(v, `"`))...)
			}
		}
	}
	return args
}

// kubelet is a node agent process started as kubeadm's kubelet.
type kubelet struct {
	cmd  *exec.Cmd
	done chan error
	log  string
}

// startKubelet starts actorlet, invoked as kubelet, in node's namespaces
// with kubeadm's command line.
func (e *env) startKubelet(node string) *kubelet {
	e.t.Helper()
	k := &kubelet{done: make(chan error, 1), log: filepath.Join(e.logs, node+"-kubelet.log")}
	f, err := os.OpenFile(k.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	// Not tied to the test's context: the test kills it itself.
	k.cmd = e.inNode(context.Background(), node, append([]string{filepath.Join(e.kbin, "kubelet")}, e.kubeletArgs(node)...)...)
	k.cmd.Stdout, k.cmd.Stderr = f, f
	if err := k.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		k.done <- k.cmd.Wait()
		f.Close()
	}()
	e.t.Logf("started actorlet as the kubelet of %s (pid %d): %s", node, k.cmd.Process.Pid, strings.Join(k.cmd.Args[2:], " "))
	return k
}

// stop ends the node agent with SIGTERM (SIGKILL after 20 s).
func (k *kubelet) stop() {
	if k.cmd.ProcessState != nil || os.Getenv("ACTORLET_KUBEADM_KEEP") == "1" {
		return
	}
	_ = k.cmd.Process.Signal(os.Interrupt)
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
}

// waitFor polls cond every 200 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("cancelled waiting for %s", what)
		case <-tick.C:
		}
	}
}

// caCertHash is kubeadm's discovery hash of the cluster CA: sha256 of its
// public key info.
func caCertHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// tail is the last n lines of a file, for failure messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
