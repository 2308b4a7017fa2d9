package benchcluster

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/actorlet/actorlet/cri"
)

// nobody is the user the simulated runtimes and the kubelet run as.
const nobody = 65534

// startProc starts a process in its own process group, logging to logPath,
// and stops the whole group (SIGTERM, then SIGKILL after 15 s) at cleanup;
// if the benchmark failed, the log's tail is printed.
func startProc(b *testing.B, logPath, name string, args ...string) {
	b.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		b.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	b.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if b.Failed() {
			tail(b, logPath)
		}
	})
}

func tail(b *testing.B, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	b.Logf("--- last lines of %s:\n%s", path, strings.Join(lines[max(len(lines)-30, 0):], "\n"))
}

// buildActorlet builds cmd/actorlet into dir/bin.
func buildActorlet(b *testing.B, dir string) string {
	b.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "bin", "actorlet")
	cmd := exec.Command(goCmd, "build", "-o", out, "github.com/actorlet/actorlet/cmd/actorlet")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

// startSim serves a simulated runtime as nobody on a socket in dir and
// returns its endpoint once it answers.
func startSim(b *testing.B, actorlet, dir, latency string) string {
	b.Helper()
	mkdirNobody(b, dir)
	endpoint := "unix://" + filepath.Join(dir, "sim.sock")
	args := []string{"--reuid=" + strconv.Itoa(nobody), "--regid=" + strconv.Itoa(nobody), "--clear-groups",
		actorlet, "sim-runtime", "--listen", endpoint}
	if latency != "" {
		args = append(args, "--latency", latency)
	}
	startProc(b, filepath.Join(dir, "sim.log"), "setpriv", args...)
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := cri.Dial(ctx, endpoint, "", cri.Options{Timeout: time.Second})
		if err == nil {
			_, err = c.Version(ctx)
			c.Close()
			if err == nil {
				return endpoint
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("simulated runtime on %s: %v", endpoint, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a process we started, with a deadline
	}
}

// startActorletNode runs `actorlet run` as the node name, with its defaults.
func startActorletNode(b *testing.B, actorlet, dir, endpoint, name, kubeconfig string) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	startProc(b, filepath.Join(dir, "actorlet.log"), actorlet, "run",
		"--container-runtime-endpoint", endpoint,
		"--kubeconfig", kubeconfig,
		"--hostname-override", name,
		"--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", filepath.Join(dir, "logs"),
		"--healthz-port", "0")
}

// startKubeletNode runs the upstream kubelet as the node name on the runtime
// at endpoint: as nobody, in its own user namespace (mapped to root there)
// and mount namespace, with /var/lib and /var/log bind-mounted from dir (it
// hard-codes paths below them). It never touches the host's sysctls: it
// cannot, and KubeletInUserNamespace makes it go on without them.
func startKubeletNode(b *testing.B, kubelet, dir, endpoint, name, kubeconfig string) {
	b.Helper()
	for _, d := range []string{"varlib/kubelet", "varlog", "certs", "volplugins"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	// The cluster's kubeconfig names a CA file nobody cannot read: inline it.
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range kc.Clusters {
		if c.CertificateAuthority != "" {
			if c.CertificateAuthorityData, err = os.ReadFile(c.CertificateAuthority); err != nil {
				b.Fatal(err)
			}
			c.CertificateAuthority = ""
		}
	}
	if err := clientcmd.WriteToFile(*kc, filepath.Join(dir, "kubeconfig")); err != nil {
		b.Fatal(err)
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: %s
resolvConf: ""
localStorageCapacityIsolation: false
podLogsDir: /var/log/pods
featureGates: {KubeletInUserNamespace: true}
`, freePort(b), freePort(b), endpoint)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	chownNobody(b, dir)
	script := fmt.Sprintf("mount --bind %[1]s/varlib /var/lib && mount --bind %[1]s/varlog /var/log && "+
		"exec %[2]s --config=%[1]s/config.yaml --kubeconfig=%[1]s/kubeconfig --hostname-override=%[3]s "+
		"--root-dir=/var/lib/kubelet --cert-dir=%[1]s/certs --volume-plugin-dir=%[1]s/volplugins", dir, kubelet, name)
	startProc(b, filepath.Join(dir, "..", "kubelet.log"), "setpriv",
		"--reuid="+strconv.Itoa(nobody), "--regid="+strconv.Itoa(nobody), "--clear-groups",
		"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--fork",
		"sh", "-c", script)
}

// waitNodeReady waits (2 min at most) for the node's Ready condition.
func waitNodeReady(b *testing.B, cs kubernetes.Interface, name string) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return
					}
					last = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
				}
			}
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond) // polling the API server, with a deadline
	}
	b.Fatalf("node %s not Ready in 2 min: %s", name, last)
}

func mkdirNobody(b *testing.B, dir string) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	chownNobody(b, dir)
}

func chownNobody(b *testing.B, dir string) {
	b.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// freePort is a free TCP port on 127.0.0.1.
func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
