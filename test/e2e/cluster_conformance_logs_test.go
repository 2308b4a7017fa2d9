package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/cri"
)

// conformanceNode starts actorlet as nodeName on containerd in the real
// cluster, waits until the Node is Ready, and removes the node's pods, the
// Node and its Lease when the test ends.
func conformanceNode(t *testing.T, c *clusterEnv, e *containerdEnv, nodeName string) nodeDirs {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, nodeName)
		_ = c.admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, nodeName, metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, nodeName)
	d := e.nodeDirs(t, nodeName)
	startNode(t, e.endpoint, d, "--kubeconfig", c.nodeKubeconfig(nodeName), "--node-status-update-frequency", "500ms",
		"--sync-frequency", "1s", "--client-ca-file", os.Getenv("ACTORLET_CLUSTER_CA"))
	waitFor(t, nodeName+" Ready", func() (bool, string) {
		n, err := c.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st, why := nodeReady(n)
		return st == corev1.ConditionTrue, why
	})
	return d
}

// podRuntimeView is what containerd holds of the pod with uid (nil: nothing).
func podRuntimeView(t *testing.T, e *containerdEnv, uid string) *cri.PodView {
	t.Helper()
	views, err := e.client.ListPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.UID == uid {
			return v
		}
	}
	return nil
}

// TestClusterConformanceFinishedPodLogs: a pod that finished (restartPolicy
// Never, Succeeded; and one Failed) keeps its exited container and its log
// file, as the kubelet does, so `kubectl logs` (through the API server's
// proxy to the kubelet API, which reads the log path from the CRI's
// ContainerStatus) shows what it printed, also while the node goes on
// running other pods. Once the pod is deleted, containerd holds nothing of
// it and its log directory is gone.
func TestClusterConformanceFinishedPodLogs(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	ctx := context.Background()
	d := conformanceNode(t, c, e, nodeName)
	pods := c.admin.CoreV1().Pods("default")
	get := podGetter(ctx, pods)

	type job struct {
		name, msg string
		exit      string
		phase     corev1.PodPhase
	}
	jobs := []job{
		{"done-" + nodeName, "output of a pod that succeeded", "0", corev1.PodSucceeded},
		{"failed-" + nodeName, "output of a pod that failed", "3", corev1.PodFailed},
	}
	uids := map[string]string{}
	for _, j := range jobs {
		p := apiPod(j.name, nodeName, corev1.Container{Name: "app", Image: e.workload, ImagePullPolicy: corev1.PullNever,
			Args: []string{"-msg", j.msg, "-exit", j.exit}})
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		created, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[j.name] = string(created.UID)
	}
	for _, j := range jobs {
		waitFor(t, j.name+" "+string(j.phase), func() (bool, string) {
			p := get(j.name)
			return p.Status.Phase == j.phase && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Terminated != nil, summary(p)
		})
		out, code := kubectl(t, "logs", j.name)
		if code != 0 || !strings.Contains(out, j.msg) {
			t.Fatalf("kubectl logs %s of the finished pod: exit %d\n%s", j.name, code, out)
		}
		out, code = kubectl(t, "logs", j.name, "-c", "app", "--tail", "1")
		if code != 0 || !strings.Contains(out, j.msg) {
			t.Fatalf("kubectl logs %s -c app --tail 1: exit %d\n%s", j.name, code, out)
		}
	}

	// The node goes on with other work (a pod started and Running after
	// the jobs finished): the finished pods' containers are still there.
	web := apiPod("after-"+nodeName, nodeName, corev1.Container{Name: "web", Image: e.workload, ImagePullPolicy: corev1.PullNever,
		Args: []string{"-msg", "up"}})
	if _, err := pods.Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, web.Name+" Running", func() (bool, string) {
		p := get(web.Name)
		return p.Status.Phase == corev1.PodRunning, summary(p)
	})
	for _, j := range jobs {
		v := podRuntimeView(t, e, uids[j.name])
		if v == nil || len(v.Containers) != 1 || v.Containers[0].State != cri.ContainerExited {
			t.Fatalf("containerd's view of the finished pod %s: %+v, want its one exited container", j.name, v)
		}
		for _, sb := range v.Sandboxes {
			if sb.Ready {
				t.Fatalf("the finished pod %s still has a ready sandbox %s", j.name, sb.ID)
			}
		}
		if out, code := kubectl(t, "logs", j.name); code != 0 || !strings.Contains(out, j.msg) {
			t.Fatalf("kubectl logs %s later: exit %d\n%s", j.name, code, out)
		}
	}

	// Deleted: nothing of it stays in containerd, nor its logs.
	for _, j := range jobs {
		if err := pods.Delete(ctx, j.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range jobs {
		waitFor(t, j.name+" removed from the API server", func() (bool, string) {
			_, err := pods.Get(ctx, j.name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), "still there"
		})
		waitFor(t, "containerd to hold nothing of "+j.name, func() (bool, string) {
			v := podRuntimeView(t, e, uids[j.name])
			if v == nil {
				return true, ""
			}
			return false, "sandboxes and containers left"
		})
		dir := filepath.Join(d.logs, "default_"+j.name+"_"+uids[j.name])
		waitFor(t, "the log directory of "+j.name+" removed", func() (bool, string) {
			_, err := os.Stat(dir)
			return os.IsNotExist(err), dir
		})
	}
}
