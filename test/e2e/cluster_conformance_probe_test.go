package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestClusterConformanceReadinessInitialDelay: a readiness probe with
// initialDelaySeconds on containerd: the pod becomes Ready, and its Ready
// condition's transition time is at least the delay after the container
// started (what the conformance suite's probe spec compares), with no
// restart.
func TestClusterConformanceReadinessInitialDelay(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	const delay = 3
	ctx := context.Background()
	conformanceNode(t, c, e, nodeName)
	pods := c.admin.CoreV1().Pods("default")
	p := apiPod("delayed-"+nodeName, nodeName, corev1.Container{Name: "app", Image: e.workload,
		ImagePullPolicy: corev1.PullNever, Args: []string{"-http", ":8080"},
		ReadinessProbe: &corev1.Probe{InitialDelaySeconds: delay, PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}})
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	waitFor(t, p.Name+" Ready", func() (bool, string) {
		var err error
		if got, err = pods.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return podCondition(got, corev1.PodReady) == corev1.ConditionTrue, summary(got)
	})
	var readyAt time.Time
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.PodReady {
			readyAt = c.LastTransitionTime.Time
		}
	}
	cs := got.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Running == nil || cs[0].RestartCount != 0 {
		t.Fatalf("container statuses %+v", cs)
	}
	started := cs[0].State.Running.StartedAt.Time
	if readyAt.Sub(started) < delay*time.Second {
		t.Fatalf("Ready at %v, %v after the container started at %v: before its %ds initial delay", readyAt, readyAt.Sub(started), started, delay)
	}
}
