package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeletBinary is the upstream kubelet of the cluster's tool cache
// ($ACTORLET_K8S_BIN/kubelet, which `test/e2e/cluster.sh install kubelet`
// builds), or an error saying why there is none.
func KubeletBinary() (string, error) {
	bin := os.Getenv("ACTORLET_K8S_BIN")
	if bin == "" {
		return "", fmt.Errorf("ACTORLET_K8S_BIN is not set: source the env file `test/e2e/cluster.sh up` wrote")
	}
	kubelet := filepath.Join(bin, "kubelet")
	if _, err := os.Stat(kubelet); err != nil {
		return "", fmt.Errorf("no upstream kubelet (%w): run `test/e2e/cluster.sh install kubelet`", err)
	}
	return kubelet, nil
}

// StartKubelet runs the upstream kubelet as the node name on the runtime
// at endpoint: as Nobody, in its own user namespace (mapped to root there)
// and mount namespace, with /var/lib and /var/log bind-mounted from dir
// (it hard-codes paths below them), logging to dir/kubelet.log. It never
// touches the host's sysctls: it cannot, and KubeletInUserNamespace makes
// it go on without them. cgroupsPerQOS and node allocatable enforcement
// are off; its ports are free ports on 127.0.0.1.
func StartKubelet(tb testing.TB, kubelet, dir, endpoint, name, kubeconfig string) {
	tb.Helper()
	for _, d := range []string{"varlib/kubelet", "varlog", "certs", "volplugins"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	// The cluster's kubeconfig names a CA file nobody cannot read: inline it.
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range kc.Clusters {
		if c.CertificateAuthority != "" {
			if c.CertificateAuthorityData, err = os.ReadFile(c.CertificateAuthority); err != nil {
				tb.Fatal(err)
			}
			c.CertificateAuthority = ""
		}
	}
	if err := clientcmd.WriteToFile(*kc, filepath.Join(dir, "kubeconfig")); err != nil {
		tb.Fatal(err)
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
`, FreePort(tb), FreePort(tb), endpoint)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600); err != nil {
		tb.Fatal(err)
	}
	ChownNobody(tb, dir)
	script := fmt.Sprintf("mount --bind %[1]s/varlib /var/lib && mount --bind %[1]s/varlog /var/log && "+
		"exec %[2]s --config=%[1]s/config.yaml --kubeconfig=%[1]s/kubeconfig --hostname-override=%[3]s "+
		"--root-dir=/var/lib/kubelet --cert-dir=%[1]s/certs --volume-plugin-dir=%[1]s/volplugins", dir, kubelet, name)
	StartProc(tb, filepath.Join(dir, "kubelet.log"), "setpriv",
		"--reuid="+strconv.Itoa(Nobody), "--regid="+strconv.Itoa(Nobody), "--clear-groups",
		"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "--fork",
		"sh", "-c", script)
}

// WaitNodeReady waits, within the given time, for the node's Ready
// condition to be True.
func WaitNodeReady(tb testing.TB, cs kubernetes.Interface, name string, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = "no Ready condition"
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
	tb.Fatalf("node %s not Ready in %v: %s", name, within, last)
}
