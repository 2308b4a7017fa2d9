package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// clusterEnv is the control plane test/e2e/cluster.sh started (`make test`
// runs `cluster.sh up` and passes its env file on). Without it the cluster
// tests skip, unless ACTORLET_E2E_REQUIRE_CLUSTER is set (CI sets it).
type clusterEnv struct {
	prefix        string
	admin         kubernetes.Interface
	apiServerDown bool
}

func needCluster(t *testing.T) *clusterEnv {
	t.Helper()
	admin := os.Getenv("ACTORLET_ADMIN_KUBECONFIG")
	if admin == "" {
		if os.Getenv("ACTORLET_E2E_REQUIRE_CLUSTER") != "" {
			t.Fatal("ACTORLET_E2E_REQUIRE_CLUSTER is set but ACTORLET_ADMIN_KUBECONFIG is not: `test/e2e/cluster.sh up` did not run or its env file was not sourced")
		}
		t.Skip("no control plane (ACTORLET_ADMIN_KUBECONFIG unset); `make test` starts one")
	}
	return &clusterEnv{prefix: os.Getenv("ACTORLET_CLUSTER_PREFIX"), admin: kubeClient(t, admin)}
}

// needControllers is needCluster for tests that need kube-scheduler and
// kube-controller-manager too (ACTORLET_CLUSTER_CONTROLLERS): it fails
// where the full environment is required, and skips elsewhere.
func needControllers(t *testing.T) *clusterEnv {
	t.Helper()
	c := needCluster(t)
	if os.Getenv("ACTORLET_CLUSTER_CONTROLLERS") == "" {
		if os.Getenv("ACTORLET_E2E_REQUIRE_CLUSTER") != "" {
			t.Fatal("the cluster runs no kube-scheduler and kube-controller-manager (ACTORLET_CLUSTER_CONTROLLERS unset)")
		}
		t.Skip("the cluster runs no kube-scheduler and kube-controller-manager")
	}
	return c
}

func kubeClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nodeKubeconfig is the kubeconfig of system:node:<name>.
func (c *clusterEnv) nodeKubeconfig(name string) string {
	return filepath.Join(c.prefix, name+".kubeconfig")
}

func nodeReady(n *corev1.Node) (corev1.ConditionStatus, string) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, c.Reason + ": " + c.Message
		}
	}
	return "", "no Ready condition"
}

// TestClusterNodeRegistersAndHeartbeats runs actorlet as node-1 against the
// real kube-apiserver (Node authorizer, NodeRestriction) on the simulated
// runtime: the Node registers with its labels, taints, capacity and runtime,
// is Ready, its Lease renews; it goes NotReady naming the runtime when the
// runtime goes away and Ready when it is back; a deleted Node registers
// again; and the node's identity cannot change another node.
func TestClusterNodeRegistersAndHeartbeats(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	t.Cleanup(func() {
		_ = c.admin.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, "node-1", metav1.DeleteOptions{})
	})
	dir := t.TempDir()
	s := startSim(t, dir)
	d := newNodeDirs(t)
	startNode(t, s.endpoint, d, "--kubeconfig", c.nodeKubeconfig("node-1"),
		"--node-labels", "tier=e2e", "--register-with-taints", "dedicated=e2e:NoSchedule", "--max-pods", "50",
		"--node-status-update-frequency", "200ms", "--node-lease-duration-seconds", "4")
	get := func() *corev1.Node {
		node, err := c.admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil {
			return &corev1.Node{}
		}
		return node
	}
	waitFor(t, "node-1 registered and Ready", func() (bool, string) {
		st, why := nodeReady(get())
		return st == corev1.ConditionTrue, why
	})
	node := get()
	hasTaint := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == "dedicated" && t.Value == "e2e" && t.Effect == corev1.TaintEffectNoSchedule
	})
	if node.Labels["tier"] != "e2e" || !hasTaint ||
		node.Status.Capacity.Pods().Value() != 50 || node.Status.NodeInfo.ContainerRuntimeVersion == "" ||
		len(node.Status.Addresses) == 0 || node.Status.Addresses[0].Address != "127.0.0.1" {
		t.Fatalf("node-1 as registered: labels %v taints %v capacity %v info %+v addresses %v",
			node.Labels, node.Spec.Taints, node.Status.Capacity, node.Status.NodeInfo, node.Status.Addresses)
	}

	var first *coordinationv1.Lease
	waitFor(t, "node-1's lease", func() (bool, string) {
		l, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "node-1", metav1.GetOptions{})
		first = l
		return err == nil && l.Spec.RenewTime != nil, fmt.Sprint(err)
	})
	if first.Spec.HolderIdentity == nil || *first.Spec.HolderIdentity != "node-1" || *first.Spec.LeaseDurationSeconds != 4 ||
		len(first.OwnerReferences) != 1 || first.OwnerReferences[0].UID != node.UID {
		t.Fatalf("lease: %+v owners %v", first.Spec, first.OwnerReferences)
	}
	waitFor(t, "a lease renewal", func() (bool, string) {
		l, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "node-1", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.After(first.Spec.RenewTime.Time), fmt.Sprint(err)
	})

	// The node's own identity may not touch another node.
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}}
	if _, err := c.admin.CoreV1().Nodes().Create(ctx, other, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.admin.CoreV1().Nodes().Delete(ctx, "node-2", metav1.DeleteOptions{}) })
	asNode := kubeClient(t, c.nodeKubeconfig("node-1"))
	n2, err := asNode.CoreV1().Nodes().Get(ctx, "node-2", metav1.GetOptions{})
	if err == nil {
		n2.Labels = map[string]string{"hijacked": "true"}
		_, err = asNode.CoreV1().Nodes().Update(ctx, n2, metav1.UpdateOptions{})
	}
	if !apierrors.IsForbidden(err) {
		t.Fatalf("node-1 changing node-2: %v, want Forbidden", err)
	}

	// The runtime goes away: NotReady, naming it; back: Ready.
	s.kill()
	waitFor(t, "node-1 NotReady without its runtime", func() (bool, string) {
		st, why := nodeReady(get())
		return st == corev1.ConditionFalse, why
	})
	startSim(t, dir) // the same socket
	waitFor(t, "node-1 Ready again", func() (bool, string) {
		st, why := nodeReady(get())
		return st == corev1.ConditionTrue, why
	})

	// A Node deleted under a running actorlet registers again.
	if err := c.admin.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-1 registered again", func() (bool, string) {
		again := get()
		st, why := nodeReady(again)
		return again.UID != "" && again.UID != node.UID && st == corev1.ConditionTrue, why
	})
}

// stopAPIServer stops the control plane's kube-apiserver (etcd, the
// scheduler and the controller-manager keep running); startAPIServer starts
// it again on the same etcd. If the test ends with it stopped, it is
// started again, so that the tests after it find it.
func (c *clusterEnv) stopAPIServer(t *testing.T) {
	t.Helper()
	c.script(t, "stop-apiserver")
	c.apiServerDown = true
	t.Cleanup(func() {
		if c.apiServerDown {
			c.startAPIServer(t)
		}
	})
}

func (c *clusterEnv) startAPIServer(t *testing.T) {
	t.Helper()
	c.script(t, "start-apiserver")
	c.apiServerDown = false
}

// script runs test/e2e/cluster.sh with a command.
func (c *clusterEnv) script(t *testing.T, command string) {
	t.Helper()
	sh := os.Getenv("ACTORLET_CLUSTER_ENV")
	if sh == "" {
		t.Fatal("ACTORLET_CLUSTER_ENV (the path of cluster.sh) is not set: source the env file cluster.sh up wrote")
	}
	if out, err := exec.Command(sh, command).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", sh, command, err, out)
	}
}

// podGetter reads a pod of pods by name for waitFor conditions: an empty
// Pod while it cannot be read.
func podGetter(ctx context.Context, pods typedcorev1.PodInterface) func(name string) *corev1.Pod {
	return func(name string) *corev1.Pod {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return &corev1.Pod{}
		}
		return p
	}
}
