package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterConformanceInitFailure: an init container fails under
// restartPolicy Never on containerd, as the conformance suite's init
// container spec drives it: while it runs, the containers not started yet
// wait with reason PodInitializing (never ContainerCreating); the pod ends
// Failed, its app container still waiting, and the Initialized condition
// says "containers with incomplete status: [init2]".
func TestClusterConformanceInitFailure(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	ctx := context.Background()
	conformanceNode(t, c, e, nodeName)
	pods := c.admin.CoreV1().Pods("default")
	ctr := func(name string, args ...string) corev1.Container {
		return corev1.Container{Name: name, Image: e.workload, ImagePullPolicy: corev1.PullNever, Args: args}
	}
	p := apiPod("init-never-"+nodeName, nodeName, ctr("run1", "-msg", "app"))
	p.Spec.InitContainers = []corev1.Container{ctr("init1", "-exit", "0"), ctr("init2", "-exit", "1")}
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	created, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := pods.Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name, ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	waiting := func(cs corev1.ContainerStatus) bool {
		return cs.State.Waiting == nil || cs.State.Waiting.Reason == "PodInitializing"
	}
	var last *corev1.Pod
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("watch: %v", ev.Object)
		}
		last = pod
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.State.Waiting == nil || cs.State.Waiting.Reason != "PodInitializing" {
				t.Fatalf("app container %s out of waiting PodInitializing: %+v", cs.Name, cs.State)
			}
		}
		for _, cs := range pod.Status.InitContainerStatuses {
			if !waiting(cs) {
				t.Fatalf("init container %s waits with %q, want PodInitializing", cs.Name, cs.State.Waiting.Reason)
			}
		}
		if pod.Status.Phase == corev1.PodFailed {
			break
		}
	}
	if last == nil || last.Status.Phase != corev1.PodFailed {
		t.Fatalf("the watch ended before the pod failed: %v", last)
	}
	var init *corev1.PodCondition
	for i := range last.Status.Conditions {
		if last.Status.Conditions[i].Type == corev1.PodInitialized {
			init = &last.Status.Conditions[i]
		}
	}
	if init == nil || init.Status != corev1.ConditionFalse || init.Reason != "ContainersNotInitialized" ||
		init.Message != "containers with incomplete status: [init2]" {
		t.Fatalf("Initialized condition %+v", init)
	}
	ics := last.Status.InitContainerStatuses
	if len(ics) != 2 || ics[1].State.Terminated == nil || ics[1].State.Terminated.ExitCode != 1 {
		t.Fatalf("init container statuses %+v", ics)
	}
}
