package statuswriter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The resize conditions are the kubelet's: once the PodActor's status no
// longer has them (the resize is done, or withdrawn), they leave the object.
func TestMergeWithdrawsResizeConditions(t *testing.T) {
	old := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred},
		{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue},
	}}
	ours := &corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	next := merge(old, ours, nil, metav1.Now())
	var got []corev1.PodConditionType
	for _, c := range next.Conditions {
		got = append(got, c.Type)
	}
	if len(got) != 2 || got[0] != corev1.PodReady || got[1] != corev1.DisruptionTarget {
		t.Fatalf("conditions %v, want [Ready DisruptionTarget]", got)
	}
}
