package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterSignalsEvents: the API events and container waiting reasons an
// operator reads with kubectl describe, for a good pod, a missing image and
// a crash loop, and the node's own events, are the kubelet's.
func TestClusterSignalsEvents(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	const nodeName = "node-2"
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, nodeName)
		_ = c.admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, nodeName, metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, nodeName)
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	d.name = nodeName
	startNode(t, s.endpoint, d, "--kubeconfig", c.nodeKubeconfig(nodeName), "--node-status-update-frequency", "500ms")
	// Each pod has an image of its own: the kubelet (and actorlet) record
	// Pulling only for an image that is not present, so a good pod sharing
	// the crash loop's image has no Pulling when the crash loop's pull
	// finished first.
	pods := map[string]*corev1.Pod{
		"good":    apiPod("sig-good", nodeName, corev1.Container{Name: "app", Image: "example.com/sig-good:1"}),
		"missing": apiPod("sig-missing", nodeName, corev1.Container{Name: "app", Image: "example.com/notfound:1"}),
		"crash": apiPod("sig-crash", nodeName, corev1.Container{Name: "app", Image: "example.com/app:1",
			Env: []corev1.EnvVar{{Name: "SIM_EXIT_AFTER", Value: "50ms"}, {Name: "SIM_EXIT_CODE", Value: "3"}}}),
	}
	for _, p := range pods {
		if _, err := c.admin.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// reasons are the event reasons recorded on an object, "Type Reason".
	reasons := func(kind, name string) []string {
		list, err := c.admin.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Source.Component == "kubelet" {
				out = append(out, e.Type+" "+e.Reason)
			}
		}
		sort.Strings(out)
		return slices.Compact(out)
	}
	has := func(got []string, want ...string) bool {
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
	waiting := func(name string) (string, string) {
		p, err := c.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return "", ""
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w.Reason, w.Message
	}
	waitFor(t, "the good pod's events", func() (bool, string) {
		got := reasons("Pod", "sig-good")
		return has(got, "Normal Pulling", "Normal Pulled", "Normal Created", "Normal Started"), fmt.Sprint(got)
	})
	waitFor(t, "the missing image's events and ImagePullBackOff", func() (bool, string) {
		got := reasons("Pod", "sig-missing")
		r, m := waiting("sig-missing")
		return has(got, "Normal Pulling", "Warning Failed", "Normal BackOff") && (r == "ImagePullBackOff" || r == "ErrImagePull"),
			fmt.Sprintf("%v waiting=%s %q", got, r, m)
	})
	waitFor(t, "the crash loop's events and CrashLoopBackOff", func() (bool, string) {
		got := reasons("Pod", "sig-crash")
		r, m := waiting("sig-crash")
		return has(got, "Normal Created", "Normal Started", "Warning BackOff") && r == "CrashLoopBackOff" &&
				strings.HasPrefix(m, "back-off ") && strings.Contains(m, "restarting failed container=app pod=sig-crash_default("),
			fmt.Sprintf("%v waiting=%s %q", got, r, m)
	})
	// A pod whose image is present (the crash loop pulled it): Pulled
	// "already present" and no Pulling, as the kubelet. Its events are
	// recorded in order through one broadcaster, so once Started is there
	// a Pulling would be too.
	if _, err := c.admin.CoreV1().Pods("default").Create(ctx, apiPod("sig-present", nodeName), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the present image's events", func() (bool, string) {
		got := reasons("Pod", "sig-present")
		return has(got, "Normal Pulled", "Normal Created", "Normal Started"), fmt.Sprint(got)
	})
	if got := reasons("Pod", "sig-present"); slices.Contains(got, "Normal Pulling") {
		t.Errorf("a pod whose image is present has events %v: Pulling for an image that was not pulled", got)
	}
	waitFor(t, "the node's events", func() (bool, string) {
		got := reasons("Node", nodeName)
		return has(got, "Normal Starting", "Normal NodeReady"), fmt.Sprint(got)
	})
}
