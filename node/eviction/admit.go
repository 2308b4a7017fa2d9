package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
)

// Admit is the kubelet's eviction admission check of a new pod while the
// node has the given pressure conditions: with none, or for a critical pod,
// it admits; with MemoryPressure alone it admits all but BestEffort pods,
// and BestEffort pods that tolerate the memory-pressure taint; with any
// other pressure it rejects. A rejection's reason is Reason ("Evicted") and
// its message names the conditions.
func Admit(pod *corev1.Pod, pressure []corev1.NodeConditionType) (ok bool, reason, message string) {
	if len(pressure) == 0 || IsCritical(pod) {
		return true, "", ""
	}
	if len(pressure) == 1 && pressure[0] == corev1.NodeMemoryPressure {
		qos := pod.Status.QOSClass
		if qos == "" {
			qos = lifecycle.QOSClass(pod)
		}
		if qos != corev1.PodQOSBestEffort {
			return true, "", ""
		}
		for _, tol := range pod.Spec.Tolerations {
			if toleratesMemoryPressure(tol) {
				return true, "", ""
			}
		}
	}
	return false, Reason, fmt.Sprintf("The node had condition: %v.", pressure)
}

// toleratesMemoryPressure reports whether tol tolerates the memory-pressure
// NoSchedule taint (which has no value), by the API's matching rules.
func toleratesMemoryPressure(tol corev1.Toleration) bool {
	if tol.Effect != "" && tol.Effect != corev1.TaintEffectNoSchedule {
		return false
	}
	if tol.Key != "" && tol.Key != corev1.TaintNodeMemoryPressure {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Key != "" && tol.Value == ""
	}
	return false
}
