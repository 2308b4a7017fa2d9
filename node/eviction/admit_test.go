package eviction

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestAdmit(t *testing.T) {
	mem := []corev1.NodeConditionType{corev1.NodeMemoryPressure}
	disk := []corev1.NodeConditionType{corev1.NodeDiskPressure}
	tolerating := mkPod(podSpec{name: "tolerating"})
	tolerating.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		pressure []corev1.NodeConditionType
		want     bool
	}{
		{"no pressure", mkPod(podSpec{name: "be"}), nil, true},
		{"memory pressure, BestEffort", mkPod(podSpec{name: "be"}), mem, false},
		{"memory pressure, Burstable", mkPod(podSpec{name: "bu", memReq: "1Mi"}), mem, true},
		{"memory pressure, BestEffort tolerating the taint", tolerating, mem, true},
		{"disk pressure, Burstable", mkPod(podSpec{name: "bu", memReq: "1Mi"}), disk, false},
		{"disk pressure, critical", mkPod(podSpec{name: "crit", priority: ptr.To(SystemCriticalPriority)}), disk, true},
		{"memory and disk pressure, tolerating memory only", tolerating, append(mem, disk...), false},
		{"memory pressure, BestEffort tolerating everything", tolerates(corev1.Toleration{Operator: corev1.TolerationOpExists}), mem, true},
		{"memory pressure, BestEffort tolerating the key with Equal", tolerates(corev1.Toleration{Key: corev1.TaintNodeMemoryPressure}), mem, true},
		{"memory pressure, BestEffort tolerating another effect", tolerates(corev1.Toleration{Key: corev1.TaintNodeMemoryPressure,
			Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}), mem, false},
		{"memory pressure, BestEffort tolerating a value", tolerates(corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Value: "x"}), mem, false},
		{"memory pressure, BestEffort tolerating disk pressure", tolerates(corev1.Toleration{Key: corev1.TaintNodeDiskPressure,
			Operator: corev1.TolerationOpExists}), mem, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := Admit(tc.pod, tc.pressure)
			if ok != tc.want {
				t.Fatalf("Admit = %v (%s: %s), want %v", ok, reason, msg, tc.want)
			}
			if !ok && (reason != "Evicted" || !strings.Contains(msg, string(tc.pressure[0]))) {
				t.Errorf("rejection %q %q", reason, msg)
			}
		})
	}
}

func tolerates(tol corev1.Toleration) *corev1.Pod {
	p := mkPod(podSpec{name: "be"})
	p.Spec.Tolerations = []corev1.Toleration{tol}
	return p
}
