package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterDeployment: two actorlet nodes, each on its own simulated
// runtime, take a Deployment of 5 replicas that kube-scheduler spreads over
// them and kube-controller-manager creates; it becomes available, and
// scaled to 0 its pods are stopped and deleted.
func TestClusterDeployment(t *testing.T) {
	c := needControllers(t)
	ctx := context.Background()
	deployments := c.admin.AppsV1().Deployments("default")
	t.Cleanup(func() {
		_ = deployments.Delete(ctx, "web", metav1.DeleteOptions{})
		for _, n := range []string{"node-1", "node-2"} {
			deleteNodePods(t, c.admin, n)
			_ = c.admin.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
			_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, n, metav1.DeleteOptions{})
		}
	})
	nodes := map[string]*node{}
	sims := map[string]*simRuntime{}
	for _, name := range []string{"node-1", "node-2"} {
		deleteNodePods(t, c.admin, name)
		sims[name] = startSim(t, t.TempDir())
		d := newNodeDirs(t)
		d.name = name
		nodes[name] = startNode(t, sims[name].endpoint, d, "--kubeconfig", c.nodeKubeconfig(name),
			"--node-status-update-frequency", "500ms")
	}
	for name := range nodes {
		waitFor(t, name+" Ready and schedulable", func() (bool, string) {
			n, err := c.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			st, why := nodeReady(n)
			return st == corev1.ConditionTrue && len(n.Spec.Taints) == 0, fmt.Sprintf("%s %s taints %v", st, why, n.Spec.Taints)
		})
	}
	replicas := int32(5)
	labels := map[string]string{"app": "web"}
	grace := int64(2)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{{Name: "app", Image: "example.com/app:1"}},
					// Over both nodes for sure: 3 and 2.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
						WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
				},
			},
		},
	}
	if _, err := deployments.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web available with 5 replicas", func() (bool, string) {
		d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.AvailableReplicas == 5, fmt.Sprintf("%+v", d.Status)
	})
	perNode := map[string]int{}
	list, err := c.admin.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Fatalf("pod %s on %s: %s", p.Name, p.Spec.NodeName, summary(&p))
		}
		perNode[p.Spec.NodeName]++
	}
	if perNode["node-1"]+perNode["node-2"] != 5 || perNode["node-1"] < 2 || perNode["node-2"] < 2 {
		t.Fatalf("pods per node %v, want 5 spread over node-1 and node-2", perNode)
	}
	for name, n := range nodes {
		if got := len(n.pods(t)); got != perNode[name] {
			t.Fatalf("%s runs %d pods, the API server binds %d to it", name, got, perNode[name])
		}
	}

	// Scaled to 0: the nodes stop the pods and delete them.
	zero := int32(0)
	d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = &zero
	if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web's pods gone from the API and the nodes", func() (bool, string) {
		list, err := c.admin.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		running := len(nodes["node-1"].pods(t)) + len(nodes["node-2"].pods(t))
		return len(list.Items) == 0 && running == 0, fmt.Sprintf("%d in the API, %d on the nodes", len(list.Items), running)
	})
	for name, s := range sims {
		if v := s.violations(t); len(v) > 0 {
			t.Fatalf("%s's runtime saw CRI violations: %v", name, v)
		}
	}
}
