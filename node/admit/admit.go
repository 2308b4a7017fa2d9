// Package admit decides whether a pod may run on the node, as two of the
// kubelet's admit handlers do:
//
//   - Resources: the pod's requests (containers, init containers and
//     overhead, by component-helpers' PodRequests) plus those of the pods
//     already admitted must stay within allocatable, and the pod count
//     within allocatable pods (maxPods).
//   - Sysctls: the pod's sysctls must be safe or allowed by
//     --allowed-unsafe-sysctls, and not in a namespace it shares with the
//     host (reason SysctlForbidden).
package admit

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Resources admits by the node's allocatable resources. It implements
// actors.Admitter. A resource absent from Allocatable is not checked
// (extended resources and hugepages are left out for now).
type Resources struct {
	Allocatable corev1.ResourceList
}

// checked are the resources admission compares, in the kubelet's order.
var checked = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// Admit returns the kubelet's reason (OutOf<resource>) and message when pod
// does not fit beside admitted; "" when it does.
func (r Resources) Admit(pod *corev1.Pod, admitted []*corev1.Pod) (reason, message string) {
	if max, ok := r.Allocatable[corev1.ResourcePods]; ok && int64(len(admitted))+1 > max.Value() {
		return "OutOfpods", fmt.Sprintf("Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", len(admitted), max.Value())
	}
	want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	used := corev1.ResourceList{}
	for _, p := range admitted {
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	for _, name := range checked {
		req, ok := want[name]
		capacity, limited := r.Allocatable[name]
		if !ok || !limited || req.IsZero() {
			continue
		}
		u := used[name]
		total := u.DeepCopy()
		total.Add(req)
		if total.Cmp(capacity) > 0 {
			return "OutOf" + string(name), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
				name, amount(name, req), amount(name, u), amount(name, capacity))
		}
	}
	return "", ""
}

// amount is a quantity as the kubelet prints it: CPU in millicores, the
// rest in units.
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
