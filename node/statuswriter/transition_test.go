package statuswriter

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A condition that changes takes the write's time as its transition time
// (Ready: when the pod became ready); one that does not keeps the object's.
func TestMergeTransitionTimes(t *testing.T) {
	accepted := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(accepted.Add(time.Minute))
	object := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: accepted},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: accepted},
	}}
	ours := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: accepted},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: accepted},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: accepted},
	}}
	next := merge(object, ours, nil, now)
	want := map[corev1.PodConditionType]metav1.Time{
		corev1.PodInitialized: accepted, corev1.PodReady: now, corev1.ContainersReady: now}
	for _, c := range next.Conditions {
		if w, ok := want[c.Type]; ok && !c.LastTransitionTime.Equal(&w) {
			t.Errorf("%s: transition %v, want %v", c.Type, c.LastTransitionTime, w)
		}
	}
}
