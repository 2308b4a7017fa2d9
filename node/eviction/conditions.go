package eviction

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// conditionText is the reason and message of a pressure condition, true and
// false, as the kubelet names them (with "actorlet" in the messages, as the
// rest of actorlet's node status).
var conditionText = map[corev1.NodeConditionType][2][2]string{
	corev1.NodeMemoryPressure: {
		{"KubeletHasSufficientMemory", "actorlet has sufficient memory available"},
		{"KubeletHasInsufficientMemory", "actorlet has insufficient memory available"},
	},
	corev1.NodeDiskPressure: {
		{"KubeletHasNoDiskPressure", "actorlet has no disk pressure"},
		{"KubeletHasDiskPressure", "actorlet has disk pressure"},
	},
	corev1.NodePIDPressure: {
		{"KubeletHasSufficientPID", "actorlet has sufficient PID available"},
		{"KubeletHasInsufficientPID", "actorlet has insufficient PID available"},
	},
}

// taintKey is the taint of each pressure condition.
var taintKey = map[corev1.NodeConditionType]string{
	corev1.NodeMemoryPressure: corev1.TaintNodeMemoryPressure,
	corev1.NodeDiskPressure:   corev1.TaintNodeDiskPressure,
	corev1.NodePIDPressure:    corev1.TaintNodePIDPressure,
}

// NodeConditions are the MemoryPressure, DiskPressure and PIDPressure
// conditions (in that order), true for those in pressure, with the
// kubelet's reasons. Their times are left zero.
func NodeConditions(pressure []corev1.NodeConditionType) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, 0, len(pressureOrder))
	for _, c := range pressureOrder {
		on := slices.Contains(pressure, c)
		st, text := corev1.ConditionFalse, conditionText[c][0]
		if on {
			st, text = corev1.ConditionTrue, conditionText[c][1]
		}
		out = append(out, corev1.NodeCondition{Type: c, Status: st, Reason: text[0], Message: text[1]})
	}
	return out
}

// Taints are the NoSchedule taints of the pressure conditions in pressure
// (node.kubernetes.io/memory-pressure, disk-pressure, pid-pressure), in
// condition order.
func Taints(pressure []corev1.NodeConditionType) []corev1.Taint {
	var out []corev1.Taint
	for _, c := range pressureOrder {
		if slices.Contains(pressure, c) {
			out = append(out, corev1.Taint{Key: taintKey[c], Effect: corev1.TaintEffectNoSchedule})
		}
	}
	return out
}
