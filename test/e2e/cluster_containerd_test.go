package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/cri"
)

// TestClusterContainerd: actorlet on containerd + runc as a member of the
// real cluster. A pod created through the API server runs the test workload
// with a pod IP on the test's CNI bridge, its status carries containerd's
// container ID and the image's digest, it answers HTTP on its pod IP, its
// events are recorded; volumes from the API server work (checkAPIVolumes);
// a graceful delete stops it on containerd and removes the object.
func TestClusterContainerd(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	ctx := context.Background()
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, nodeName)
		_ = c.admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, nodeName, metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, nodeName)
	d := e.nodeDirs(t, nodeName) // its cleanup removes sandboxes of pods named *-node-2
	startNode(t, e.endpoint, d, "--kubeconfig", c.nodeKubeconfig(nodeName), "--node-status-update-frequency", "500ms", "--sync-frequency", "1s",
		"--client-ca-file", os.Getenv("ACTORLET_CLUSTER_CA"))
	waitFor(t, nodeName+" Ready", func() (bool, string) {
		n, err := c.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st, why := nodeReady(n)
		return st == corev1.ConditionTrue, why
	})
	n, err := c.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") {
		t.Fatalf("the Node's runtime is %q, want containerd://<version>", n.Status.NodeInfo.ContainerRuntimeVersion)
	}

	pods := c.admin.CoreV1().Pods("default")
	name := "web-" + nodeName
	web := apiPod(name, nodeName, corev1.Container{
		Name: "web", Image: e.workload, ImagePullPolicy: corev1.PullNever,
		Args: []string{"-msg", "web up", "-http", ":8080"},
	})
	created, err := pods.Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	get := func() *corev1.Pod {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return &corev1.Pod{}
		}
		return p
	}
	waitFor(t, name+" Running and Ready", func() (bool, string) {
		p := get()
		return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue, summary(p)
	})
	p := get()
	ip := net.ParseIP(p.Status.PodIP)
	if ip == nil || ip.IsLoopback() || p.Status.PodIP == p.Status.HostIP {
		t.Fatalf("pod IP %q is not an address of its own (host %q)", p.Status.PodIP, p.Status.HostIP)
	}
	cs := p.Status.ContainerStatuses
	if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "containerd://") || cs[0].ImageID == "" || cs[0].RestartCount != 0 {
		t.Fatalf("container statuses: %+v", cs)
	}
	waitFor(t, name+" answering on its pod IP", func() (bool, string) {
		body, err := httpGet("http://" + net.JoinHostPort(p.Status.PodIP, "8080") + "/")
		// The workload answers "ok <hostname>", the pod's name.
		return err == nil && strings.HasPrefix(body, "ok "+name), fmt.Sprint(body, err)
	})
	waitFor(t, "Created and Started events", func() (bool, string) {
		rs := eventReasons(t, c.admin, created)
		return slices.Contains(rs, "Created") && slices.Contains(rs, "Started"), strings.Join(rs, ",")
	})

	ticker := apiPod("ticker-"+nodeName, nodeName, corev1.Container{
		Name: "app", Image: e.workload, ImagePullPolicy: corev1.PullNever, Args: []string{"-print-every", "200ms", "-burn"}})
	if _, err := pods.Create(ctx, ticker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ticker Running", func() (bool, string) {
		p, err := pods.Get(ctx, ticker.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, fmt.Sprint(err)
	})
	checkKubeletAPI(t, c.admin, name, nodeName)
	checkAPIVolumes(t, c.admin, e, d, nodeName)

	// Graceful delete: stopped on containerd, then the object is gone.
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, name+" removed from the API server", func() (bool, string) {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "still there"
	})
	views, err := e.client.ListPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.UID != string(created.UID) {
			continue
		}
		for _, sb := range v.Sandboxes {
			if sb.Ready {
				t.Fatalf("containerd still runs sandbox %s of the deleted pod", sb.ID)
			}
		}
		for _, ctr := range v.Containers {
			if ctr.State == cri.ContainerRunning {
				t.Fatalf("containerd still runs container %s of the deleted pod", ctr.ID)
			}
		}
	}
	if rs := eventReasons(t, c.admin, created); !slices.Contains(rs, "Killing") {
		t.Fatalf("no Killing event: %v", rs)
	}
}
