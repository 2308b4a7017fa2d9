package kubeletmetrics

import "strings"

// admissionReasons are the rejection reasons the kubelet counts under their
// own name in kubelet_admission_rejections_total (pkg/kubelet
// admissionRejectionReasons); an "OutOf..." reason not among them is
// "OutOfExtendedResources", any other "Other", so that a custom admit
// handler's reasons cannot grow the label's cardinality.
var admissionReasons = map[string]bool{
	"AppArmor": true, "PodOSSelectorNodeLabelDoesNotMatch": true, "PodOSNotSupported": true, "InvalidNodeInfo": true,
	"InitContainerRestartPolicyForbidden": true, "SupplementalGroupsPolicyNotSupported": true,
	"UnexpectedAdmissionError": true, "UnknownReason": true, "UnexpectedPredicateFailureType": true,
	"OutOfcpu": true, "OutOfmemory": true, "OutOfephemeral-storage": true, "OutOfpods": true,
	"PodLevelResourcesNotSupported": true, "PodFeatureUnsupported": true,
	"node(s) had taints that the pod didn't tolerate": true, "Evicted": true, "SysctlForbidden": true,
	"TopologyAffinityError": true, "NodeShutdown": true, "VolumeAttachmentLimitExceeded": true,
}

// admissionReason is the reason label of a pod rejection, as the kubelet's
// recordAdmissionRejection gives it.
func admissionReason(reason string) string {
	switch {
	case admissionReasons[reason]:
		return reason
	case strings.HasPrefix(reason, "OutOf"):
		return "OutOfExtendedResources"
	}
	return "Other"
}
