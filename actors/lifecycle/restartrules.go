package lifecycle

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// containerShouldRestart reports whether container c of a pod with spec,
// exited with code exit, is restarted, as the kubelet decides it with
// container restart rules (KEP-5307, on by default since v1.35): with a
// container-level restartPolicy, its restartPolicyRules are tried in order
// and the first whose exit codes match decides (action Restart: restarted);
// else the container's restartPolicy decides (Always, OnFailure on a
// non-zero code, Never). Without one, the pod's restartPolicy decides
// (Always when unset).
func containerShouldRestart(c *corev1.Container, spec *corev1.PodSpec, exit int32) bool {
	if c != nil && c.RestartPolicy != nil {
		for _, rule := range c.RestartPolicyRules {
			if rule.ExitCodes == nil || !exitCodesMatch(rule.ExitCodes, exit) {
				continue
			}
			if rule.Action == corev1.ContainerRestartRuleActionRestart {
				return true
			}
			break // another action (RestartAllContainers is not supported): the policy decides
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exit != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exit != 0
	default:
		return true
	}
}

// exitCodesMatch reports whether exit satisfies the rule's exit codes
// (In: one of the values; NotIn: none of them).
func exitCodesMatch(m *corev1.ContainerRestartRuleOnExitCodes, exit int32) bool {
	in := slices.Contains(m.Values, exit)
	switch m.Operator {
	case corev1.ContainerRestartRuleOnExitCodesOpIn:
		return in
	case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
		return !in
	}
	return false
}
