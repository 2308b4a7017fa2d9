package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// lockedBuffer collects a child's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClusterMetricsServer: metrics-server v0.8.0 (built by cluster.sh from
// the module proxy) scrapes actorlet's /metrics/resource through the
// authenticated kubelet API, as it scrapes a kubelet, and serves the node's
// and a pod's usage; the pod runs on the simulated runtime with a chosen
// usage (SIM_CPU_MILLICORES, SIM_MEMORY_BYTES). metrics-server is asked on
// its own port (the test apiserver has no aggregation layer configured).
func TestClusterMetricsServer(t *testing.T) {
	c := needCluster(t)
	bin := os.Getenv("ACTORLET_METRICS_SERVER")
	if bin == "" {
		t.Fatal("ACTORLET_METRICS_SERVER is not set (cluster.sh up writes it)")
	}
	ctx := context.Background()
	const nodeName = "node-1"
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, nodeName)
		_ = c.admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, nodeName, metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, nodeName)
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	startNode(t, s.endpoint, d, "--kubeconfig", c.nodeKubeconfig(nodeName), "--node-status-update-frequency", "500ms",
		"--client-ca-file", os.Getenv("ACTORLET_CLUSTER_CA"))
	name := "hungry-" + nodeName
	pod := apiPod(name, nodeName, corev1.Container{Name: "app", Image: "example.com/app:1", Env: []corev1.EnvVar{
		{Name: "SIM_CPU_MILLICORES", Value: "250"}, {Name: "SIM_MEMORY_BYTES", Value: fmt.Sprint(64 << 20)}}})
	if _, err := c.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	admin := os.Getenv("ACTORLET_ADMIN_KUBECONFIG")
	port := freePort(t)
	var out lockedBuffer
	ms := exec.Command(bin, "--kubeconfig="+admin, "--authentication-kubeconfig="+admin, "--authorization-kubeconfig="+admin,
		"--authentication-skip-lookup", "--bind-address=127.0.0.1", "--secure-port="+port, "--cert-dir="+t.TempDir(),
		"--kubelet-insecure-tls", "--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port",
		"--metric-resolution=10s", "--kubelet-request-timeout=5s")
	ms.Stdout, ms.Stderr = &out, &out
	if err := ms.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ms.Process.Kill()
		_ = ms.Wait()
		if t.Failed() {
			t.Logf("--- metrics-server output (tail) ---\n%s", tail(out.String(), 40))
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", admin)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string, into any) (int, error) {
		req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:"+port+path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, nil
		}
		return resp.StatusCode, json.NewDecoder(resp.Body).Decode(into)
	}
	type usage struct {
		Usage      corev1.ResourceList `json:"usage"`
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	}
	waitFor(t, "node metrics from metrics-server", func() (bool, string) {
		var n usage
		code, err := get("/apis/metrics.k8s.io/v1beta1/nodes/"+nodeName, &n)
		return code == http.StatusOK && err == nil && !n.Usage.Cpu().IsZero() && !n.Usage.Memory().IsZero(), fmt.Sprintf("%d %v %v", code, err, n.Usage)
	})
	waitFor(t, "the pod's metrics from metrics-server", func() (bool, string) {
		var p usage
		code, err := get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/"+name, &p)
		if code != http.StatusOK || err != nil || len(p.Containers) != 1 {
			return false, fmt.Sprintf("%d %v %+v", code, err, p)
		}
		cpu, mem := p.Containers[0].Usage.Cpu(), p.Containers[0].Usage.Memory()
		lo, hi := resource.MustParse("200m"), resource.MustParse("300m")
		return cpu.Cmp(lo) >= 0 && cpu.Cmp(hi) <= 0 && mem.Value() == 64<<20, fmt.Sprintf("cpu %s memory %s", cpu, mem)
	})
}
