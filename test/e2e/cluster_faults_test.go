package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandboxesOf counts the runtime's ready sandboxes of a pod UID.
func (s *simRuntime) sandboxesOf(t *testing.T, uid string) int {
	t.Helper()
	list, err := s.client.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": uid},
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestClusterFaults: actorlet killed with SIGKILL and restarted flips no
// Ready pod to NotReady (a watch sees every status the API server stores);
// pods deleted while it was down (gracefully, or forced) are taken down
// and their objects removed after it starts; while the API server is
// stopped (cluster.sh stop-apiserver; 30 s, then started again on the same
// etcd) pods keep running and the journal keeps
// recording (restarts, a new static pod), and when it returns statuses, the
// mirror pod and the Lease catch up.
func TestClusterFaults(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, "node-1")
		_ = c.admin.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, "node-1", metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, "node-1")
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	args := []string{"--kubeconfig", c.nodeKubeconfig("node-1"), "--node-status-update-frequency", "200ms", "--node-lease-duration-seconds", "4"}
	n := startNode(t, s.endpoint, d, args...)
	pods := c.admin.CoreV1().Pods("default")
	get := podGetter(ctx, pods)
	for _, name := range []string{"steady", "doomed", "forced"} {
		if _, err := pods.Create(ctx, apiPod(name, "node-1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	crashy := apiPod("crashy", "node-1", corev1.Container{Name: "app", Image: "example.com/app:1",
		Env: []corev1.EnvVar{{Name: "SIM_EXIT_AFTER", Value: "100ms"}, {Name: "SIM_EXIT_CODE", Value: "1"}}})
	if _, err := pods.Create(ctx, crashy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"steady", "doomed", "forced"} {
		waitFor(t, name+" Ready", func() (bool, string) {
			p := get(name)
			return podCondition(p, corev1.PodReady) == corev1.ConditionTrue, summary(p)
		})
	}
	steady, doomed, forced := get("steady"), get("doomed"), get("forced")

	// Watch steady from here on: every status the API server stores.
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "steady").String(),
		ResourceVersion: steady.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notReady []string
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Modified && podCondition(p, corev1.PodReady) != corev1.ConditionTrue {
				mu.Lock()
				notReady = append(notReady, summary(p))
				mu.Unlock()
			}
		}
	}()

	// SIGKILL; two pods deleted while the node is down; restart.
	n.kill()
	if err := pods.Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "forced", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if p := get("doomed"); p.DeletionTimestamp == nil {
		t.Fatalf("doomed was deleted at once without its node: %s", summary(p))
	}
	n = startNode(t, s.endpoint, d, args...)
	waitFor(t, "doomed taken down and deleted", func() (bool, string) {
		_, err := pods.Get(ctx, "doomed", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && s.sandboxesOf(t, string(doomed.UID)) == 0, fmt.Sprint(err)
	})
	waitFor(t, "forced taken down", func() (bool, string) {
		return s.sandboxesOf(t, string(forced.UID)) == 0, "its sandbox still runs"
	})
	// A status round after the restart: crashy's restarts keep being written.
	before := get("crashy")
	waitFor(t, "crashy's restarts written after the restart", func() (bool, string) {
		p := get("crashy")
		return len(p.Status.ContainerStatuses) == 1 && len(before.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].RestartCount > before.Status.ContainerStatuses[0].RestartCount, summary(p)
	})
	w.Stop()
	<-watched
	mu.Lock()
	if len(notReady) > 0 {
		t.Fatalf("steady was written not Ready across the restart: %v", notReady)
	}
	mu.Unlock()
	if p := get("steady"); p.UID != steady.UID || s.sandboxesOf(t, string(steady.UID)) != 1 || p.Status.Phase != corev1.PodRunning ||
		p.Status.ContainerStatuses[0].RestartCount != 0 || p.Status.ContainerStatuses[0].ContainerID != steady.Status.ContainerStatuses[0].ContainerID {
		t.Fatalf("steady after the restart: %s, %d sandboxes (before: %s)", summary(p), s.sandboxesOf(t, string(steady.UID)), summary(steady))
	}

	// The API server is stopped, then started again.
	lease := func() time.Time {
		l, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	outage := 30 * time.Second
	if v, err := time.ParseDuration(os.Getenv("ACTORLET_E2E_OUTAGE")); err == nil {
		outage = v
	}
	cutAt := lease()
	restartsAtCut := get("crashy").Status.ContainerStatuses[0].RestartCount
	c.stopAPIServer(t)
	outageOver := time.After(outage)
	writeManifest(t, d.manifests, "late.yaml", podManifest("late", nil))
	var seen int32
	waitFor(t, "crashy restarting and late running with the API server away", func() (bool, string) {
		local := n.pods(t)
		cr, late := local["default/crashy"], local["default/late-node-1"]
		if len(cr.Status.ContainerStatuses) == 1 {
			seen = cr.Status.ContainerStatuses[0].RestartCount
		}
		return seen >= restartsAtCut+3 && late.Status.Phase == corev1.PodRunning, fmt.Sprintf("crashy restarts %d (at the cut %d), late %s", seen, restartsAtCut, late.Status.Phase)
	})
	// The outage lasts its full length (ACTORLET_E2E_OUTAGE, default 30s):
	// the fault under test, not a wait for a condition.
	<-outageOver
	c.startAPIServer(t)
	waitFor(t, "status, mirror pod and lease caught up", func() (bool, string) {
		cr, late := get("crashy"), get("late-node-1")
		n := int32(-1)
		if len(cr.Status.ContainerStatuses) == 1 {
			n = cr.Status.ContainerStatuses[0].RestartCount
		}
		return n >= seen && late.Status.Phase == corev1.PodRunning && lease().After(cutAt),
			fmt.Sprintf("crashy restarts %d (seen %d), late %s, lease %s (cut at %s)", n, seen, summary(late), lease(), cutAt)
	})
	// If the outage outlasted the node monitor grace period, the node
	// lifecycle controller marked the node Unknown and steady not Ready:
	// actorlet's node status period writes the node Ready again (it
	// compares with the server's Node), and the status writer's resync
	// writes steady's status again once its pod informer shows the change.
	// The informer's reflector backs off up to 30 s while the API server is
	// away and may need one more round after it returns; hence the longer
	// deadline (a deadline, not a timing under test).
	waitWithin(t, 3*time.Minute, "steady Ready after the outage", func() (bool, string) {
		p := get("steady")
		return podCondition(p, corev1.PodReady) == corev1.ConditionTrue, summary(p)
	})
}
