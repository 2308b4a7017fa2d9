package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// apiPod is a pod bound to node by its spec (no scheduler needed).
func apiPod(name, node string, containers ...corev1.Container) *corev1.Pod {
	grace := int64(2)
	if len(containers) == 0 {
		containers = []corev1.Container{{Name: "app", Image: "example.com/app:1"}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: containers, TerminationGracePeriodSeconds: &grace},
	}
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func summary(p *corev1.Pod) string {
	var cs []string
	for _, c := range p.Status.ContainerStatuses {
		cs = append(cs, fmt.Sprintf("%s ready=%v restarts=%d state=%+v", c.Name, c.Ready, c.RestartCount, c.State))
	}
	return fmt.Sprintf("phase=%s reason=%s ip=%s ready=%s deletion=%v containers=%v", p.Status.Phase, p.Status.Reason,
		p.Status.PodIP, podCondition(p, corev1.PodReady), p.DeletionTimestamp, cs)
}

// deleteNodePods removes every pod bound to node at once (cleanup).
func deleteNodePods(t *testing.T, c kubernetes.Interface, node string) {
	ctx := context.Background()
	list, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		t.Logf("cleanup: list pods: %v", err)
		return
	}
	zero := int64(0)
	for _, p := range list.Items {
		_ = c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}
}

func eventReasons(t *testing.T, c kubernetes.Interface, pod *corev1.Pod) []string {
	t.Helper()
	list, err := c.CoreV1().Events(pod.Namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Source.Component == "kubelet" && e.Source.Host != "" {
			out = append(out, e.Reason)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestClusterPods runs node-1 on the simulated runtime against the real API
// server: pods bound to it run and get their status written (phase,
// conditions, container statuses, IPs, start time) with the scheduler's
// condition kept; events carry the kubelet's reasons; a pod that does not
// fit is Failed with OutOfcpu and the node goes on; a static pod gets a
// mirror pod with its status; a graceful deletion stops the pod and
// actorlet deletes the object.
func TestClusterPods(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, "node-1")
		deleteNodePods(t, c.admin, "node-2")
		_ = c.admin.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, "node-1", metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, "node-1")
	deleteNodePods(t, c.admin, "node-2")
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	writeManifest(t, d.manifests, "static.yaml", podManifest("static", nil))
	n := startNode(t, s.endpoint, d, "--kubeconfig", c.nodeKubeconfig("node-1"),
		"--node-status-update-frequency", "200ms")
	pods := c.admin.CoreV1().Pods("default")
	get := podGetter(ctx, pods)
	waitFor(t, "node-1 Ready", func() (bool, string) {
		node, err := c.admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st, why := nodeReady(node)
		return st == corev1.ConditionTrue, why
	})

	// A two-container pod runs; its status is written.
	web := apiPod("web", "node-1",
		corev1.Container{Name: "app", Image: "example.com/app:1"},
		corev1.Container{Name: "side", Image: "example.com/side:1"})
	web.Status.Conditions = nil
	created, err := pods.Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web Running and Ready", func() (bool, string) {
		p := get("web")
		return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue, summary(p)
	})
	p := get("web")
	if p.Status.PodIP == "" || len(p.Status.PodIPs) != 1 || p.Status.HostIP != "127.0.0.1" || p.Status.StartTime == nil ||
		len(p.Status.ContainerStatuses) != 2 || p.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("web's status: %+v", p.Status)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready || cs.Started == nil || !*cs.Started || cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "actorlet-sim://") || cs.ImageID == "" || cs.Image == "" {
			t.Fatalf("web's container status %+v", cs)
		}
	}
	for _, ct := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if podCondition(p, ct) != corev1.ConditionTrue {
			t.Fatalf("web's condition %s: %+v", ct, p.Status.Conditions)
		}
	}
	waitFor(t, "web's events", func() (bool, string) {
		got := eventReasons(t, c.admin, created)
		return len(got) >= 4 && slices.Contains(got, "Pulling") && slices.Contains(got, "Pulled") &&
			slices.Contains(got, "Created") && slices.Contains(got, "Started"), fmt.Sprint(got)
	})

	// A pod that asks for more CPU than the node has is rejected; the next
	// pod runs.
	big := apiPod("big", "node-1", corev1.Container{Name: "app", Image: "example.com/app:1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100000")}}})
	if big, err = pods.Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "big Failed with OutOfcpu", func() (bool, string) {
		p := get("big")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "OutOfcpu" && strings.Contains(p.Status.Message, "cpu"), summary(p)
	})
	waitFor(t, "big's OutOfcpu event", func() (bool, string) {
		got := eventReasons(t, c.admin, big)
		return slices.Contains(got, "OutOfcpu"), fmt.Sprint(got)
	})
	if _, err := pods.Create(ctx, apiPod("after-big", "node-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "after-big Running", func() (bool, string) {
		p := get("after-big")
		return p.Status.Phase == corev1.PodRunning, summary(p)
	})

	// A pod the node cannot run (one for Windows): Failed with the
	// kubelet's reason and an event; the node goes on.
	odd := apiPod("odd", "node-1")
	odd.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	if odd, err = pods.Create(ctx, odd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "odd Failed with a reason", func() (bool, string) {
		p := get("odd")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "PodOSNotSupported" && p.Status.Message != "", summary(p)
	})
	waitFor(t, "odd's event", func() (bool, string) {
		got := eventReasons(t, c.admin, odd)
		return slices.Contains(got, "PodOSNotSupported"), fmt.Sprint(got)
	})

	// The node's identity cannot write another node's pods.
	other := apiPod("elsewhere", "node-2")
	if other, err = pods.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asNode := kubeClient(t, c.nodeKubeconfig("node-1")).CoreV1().Pods("default")
	other.Status.Phase = corev1.PodFailed
	if _, err := asNode.UpdateStatus(ctx, other, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("node-1 writing the status of node-2's pod: %v, want Forbidden", err)
	}
	if err := asNode.Delete(ctx, "elsewhere", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("node-1 deleting node-2's pod: %v, want Forbidden", err)
	}

	// The static pod's mirror pod, owned by the Node, with its status.
	waitFor(t, "the static pod's mirror pod Running", func() (bool, string) {
		p := get("static-node-1")
		return p.Annotations["kubernetes.io/config.mirror"] != "" && p.Status.Phase == corev1.PodRunning &&
			len(p.OwnerReferences) == 1 && p.OwnerReferences[0].Kind == "Node", summary(p)
	})
	// Deleted by someone: it comes back.
	mirror := get("static-node-1")
	if err := pods.Delete(ctx, "static-node-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mirror pod re-created", func() (bool, string) {
		p := get("static-node-1")
		return p.UID != "" && p.UID != mirror.UID && p.Status.Phase == corev1.PodRunning, summary(p)
	})
	if _, ok := n.pods(t)["default/static-node-1"]; !ok {
		t.Fatal("deleting the mirror pod took the static pod down")
	}

	// Graceful deletion: the pod stops, then actorlet deletes the object.
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web gone from the API", func() (bool, string) {
		_, err := pods.Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if _, ok := n.pods(t)["default/web"]; ok {
		t.Fatal("web is gone from the API but the node still runs it")
	}
	waitFor(t, "web's Killing event", func() (bool, string) {
		got := eventReasons(t, c.admin, created)
		return slices.Contains(got, "Killing"), fmt.Sprint(got)
	})

	// Removing the manifest deletes the mirror pod.
	removeManifest(t, d.manifests, "static.yaml")
	waitFor(t, "the mirror pod deleted", func() (bool, string) {
		_, err := pods.Get(ctx, "static-node-1", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if v := s.violations(t); len(v) > 0 {
		t.Fatalf("CRI violations: %v", v)
	}
}

func removeManifest(t *testing.T, dir, file string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
}
