package e2e

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterConformanceSpecUpdates: the spec changes the API server allows
// on a running pod take effect on containerd, as the kubelet applies them:
// activeDeadlineSeconds set on a running pod fails it (DeadlineExceeded)
// and stops its container; a container's image changed is restarted with
// the new image (restart count 1, the status shows the new image) while the
// pod stays Running.
func TestClusterConformanceSpecUpdates(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	ctx := context.Background()
	conformanceNode(t, c, e, nodeName)
	pods := c.admin.CoreV1().Pods("default")
	get := podGetter(ctx, pods)
	start := func(name string) *corev1.Pod {
		p := apiPod(name, nodeName, corev1.Container{Name: "app", Image: e.workload, ImagePullPolicy: corev1.PullNever,
			Args: []string{"-msg", "up"}})
		created, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, name+" Running", func() (bool, string) {
			p := get(name)
			return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue, summary(p)
		})
		return created
	}

	// activeDeadlineSeconds set while it runs (a second: already passed).
	start("deadline-" + nodeName)
	p := get("deadline-" + nodeName)
	one := int64(1)
	p.Spec.ActiveDeadlineSeconds = &one
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p.Name+" Failed with DeadlineExceeded and its container stopped", func() (bool, string) {
		p := get(p.Name)
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "DeadlineExceeded" &&
			len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Terminated != nil, summary(p)
	})

	// A new image for the running container.
	start("image-" + nodeName)
	p = get("image-" + nodeName)
	pause := os.Getenv("ACTORLET_E2E_PAUSE_IMAGE")
	if pause == "" {
		t.Fatal("ACTORLET_E2E_PAUSE_IMAGE is not set (env.sh up writes it)")
	}
	p.Spec.Containers[0].Image = pause
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p.Name+" running the new image after one restart", func() (bool, string) {
		p := get(p.Name)
		if len(p.Status.ContainerStatuses) != 1 {
			return false, summary(p)
		}
		cs := p.Status.ContainerStatuses[0]
		return p.Status.Phase == corev1.PodRunning && cs.State.Running != nil && cs.RestartCount == 1 && cs.Image == pause,
			summary(p) + " image " + cs.Image
	})
}
