package eviction

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Reason is the reason of an eviction, and of a rejection at admission.
const Reason = "Evicted"

// message is the kubelet's eviction message for evicting c because t was met
// on observation o, e.g. "The node was low on resource: memory. Threshold
// quantity: 100Mi, available: 50Mi. Container app was using 120Mi, request
// is 0, has larger consumption of memory." Containers are named when they
// use more memory or ephemeral storage than they request.
func message(t Threshold, o Observation, c candidate) string {
	r := t.Signal.Resource()
	var b strings.Builder
	fmt.Fprintf(&b, "The node was low on resource: %s. ", r)
	q := t.Value.Of(o.Capacity)
	fmt.Fprintf(&b, "Threshold quantity: %s, available: %s. ", q.String(), o.Available.String())
	if c.hasStats && (r == corev1.ResourceMemory || r == corev1.ResourceEphemeralStorage) {
		containers := append(append([]corev1.Container(nil), c.pod.Spec.Containers...), c.pod.Spec.InitContainers...)
		for _, ctr := range containers {
			cu, ok := c.usage.Containers[ctr.Name]
			if !ok {
				continue
			}
			use := cu.Memory
			if r == corev1.ResourceEphemeralStorage {
				use = cu.EphemeralStorage
			}
			req := ctr.Resources.Requests[r]
			if use.Cmp(req) > 0 {
				fmt.Fprintf(&b, "Container %s was using %s, request is %s, has larger consumption of %s. ",
					ctr.Name, use.String(), req.String(), r)
			}
		}
	}
	return strings.TrimSpace(b.String())
}
