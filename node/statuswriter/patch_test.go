package statuswriter

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A status that differs from the object's only below the second (the
// PodActor's times have nanoseconds, the API server keeps seconds) is no
// patch; a change the API server keeps is one, with the UID.
func TestStatusPatchOnlyForWhatTheAPIServerKeeps(t *testing.T) {
	at := time.Date(2026, 12, 7, 7, 0, 0, 123456789, time.UTC)
	status := func(t time.Time, phase corev1.PodPhase) *corev1.PodStatus {
		return &corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: t},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: t}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: t}}}}}}
	}
	onServer := status(at.Truncate(time.Second), corev1.PodRunning)
	p, err := statusPatch("uid-1", onServer, status(at, corev1.PodRunning))
	if err != nil || p != nil {
		t.Fatalf("sub-second times only: patch %s, %v; want none", p, err)
	}
	p, err = statusPatch("uid-1", onServer, status(at.Add(time.Second), corev1.PodRunning))
	if err != nil || !strings.Contains(string(p), `"uid":"uid-1"`) || !strings.Contains(string(p), "startTime") {
		t.Fatalf("a new second: patch %s, %v; want the times, with the UID", p, err)
	}
	p, err = statusPatch("uid-1", onServer, status(at, corev1.PodSucceeded))
	if err != nil || !strings.Contains(string(p), `"phase":"Succeeded"`) {
		t.Fatalf("a new phase: patch %s, %v; want the phase", p, err)
	}
}
