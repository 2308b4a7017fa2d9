package statuswriter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod with readiness gates is Ready only when every gate's condition is
// True on the object; ContainersReady stays the containers' own.
func TestMergeReadinessGates(t *testing.T) {
	ours := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
	}}
	gates := []corev1.PodReadinessGate{{ConditionType: "k8s.io/a"}, {ConditionType: "k8s.io/b"}}
	cond := func(st *corev1.PodStatus, t corev1.PodConditionType) corev1.PodCondition {
		for _, c := range st.Conditions {
			if c.Type == t {
				return c
			}
		}
		return corev1.PodCondition{}
	}
	for _, tc := range []struct {
		name      string
		object    []corev1.PodCondition
		wantReady corev1.ConditionStatus
		wantMsg   string
	}{
		{"no gate condition", nil, corev1.ConditionFalse,
			`corresponding condition of pod readiness gate "k8s.io/a" does not exist., corresponding condition of pod readiness gate "k8s.io/b" does not exist.`},
		{"one False", []corev1.PodCondition{{Type: "k8s.io/a", Status: corev1.ConditionTrue}, {Type: "k8s.io/b", Status: corev1.ConditionFalse}},
			corev1.ConditionFalse, `the status of pod readiness gate "k8s.io/b" is not "True", but False`},
		{"all True", []corev1.PodCondition{{Type: "k8s.io/a", Status: corev1.ConditionTrue}, {Type: "k8s.io/b", Status: corev1.ConditionTrue}},
			corev1.ConditionTrue, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := merge(&corev1.PodStatus{Conditions: tc.object}, ours, gates, metav1.Now())
			r := cond(next, corev1.PodReady)
			if r.Status != tc.wantReady || r.Message != tc.wantMsg {
				t.Fatalf("Ready %s %q, want %s %q", r.Status, r.Message, tc.wantReady, tc.wantMsg)
			}
			if tc.wantReady == corev1.ConditionFalse && r.Reason != "ReadinessGatesNotReady" {
				t.Fatalf("reason %q", r.Reason)
			}
			if cond(next, corev1.ContainersReady).Status != corev1.ConditionTrue {
				t.Fatal("ContainersReady changed")
			}
			for _, c := range tc.object {
				if cond(next, c.Type).Status != c.Status {
					t.Fatalf("gate condition %s not kept", c.Type)
				}
			}
		})
	}
	if r := cond(merge(&corev1.PodStatus{}, ours, nil, metav1.Now()), corev1.PodReady); r.Status != corev1.ConditionTrue {
		t.Fatal("a pod without gates is not Ready")
	}
}
