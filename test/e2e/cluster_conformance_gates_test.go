package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestClusterConformanceReadinessGates: a pod with a readiness gate runs
// with its containers ready but is not Ready until another party sets the
// gate's condition True on its status; set False again, it is not Ready
// again. As the conformance suite's readiness gate spec drives it.
func TestClusterConformanceReadinessGates(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	const gate = "k8s.io/test-condition1"
	ctx := context.Background()
	conformanceNode(t, c, e, nodeName)
	pods := c.admin.CoreV1().Pods("default")
	p := apiPod("gated-"+nodeName, nodeName, corev1.Container{Name: "app", Image: e.workload,
		ImagePullPolicy: corev1.PullNever, Args: []string{"-msg", "up"}})
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func() *corev1.Pod {
		p, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return &corev1.Pod{}
		}
		return p
	}
	readyReason := func(p *corev1.Pod) string {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Reason
			}
		}
		return ""
	}
	waitFor(t, "containers ready, the pod not Ready for its gate", func() (bool, string) {
		p := get()
		return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.ContainersReady) == corev1.ConditionTrue &&
			podCondition(p, corev1.PodReady) == corev1.ConditionFalse && readyReason(p) == "ReadinessGatesNotReady", summary(p)
	})
	set := func(status corev1.ConditionStatus) {
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, gate, status)
		if _, err := pods.Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	set(corev1.ConditionTrue)
	waitFor(t, "Ready once the gate is True", func() (bool, string) {
		p := get()
		return podCondition(p, corev1.PodReady) == corev1.ConditionTrue && podCondition(p, gate) == corev1.ConditionTrue, summary(p)
	})
	set(corev1.ConditionFalse)
	waitFor(t, "not Ready once the gate is False", func() (bool, string) {
		p := get()
		return podCondition(p, corev1.PodReady) == corev1.ConditionFalse && podCondition(p, gate) == corev1.ConditionFalse, summary(p)
	})
}
