package eviction

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// candidate is a pod with what ranking needs of it.
type candidate struct {
	pod      *corev1.Pod
	usage    PodUsage
	hasStats bool
	request  resource.Quantity // of the starved resource
	priority int32
}

// over reports whether the pod uses more than it requests.
func (c candidate) over(r corev1.ResourceName) bool {
	u := c.usage.Of(r)
	return u.Cmp(c.request) > 0
}

// aboveRequest is usage minus request (may be negative).
func (c candidate) aboveRequest(r corev1.ResourceName) resource.Quantity {
	u := c.usage.Of(r)
	u.Sub(c.request)
	return u
}

// podRequest is the pod's request of r from its spec (with overhead and
// pod-level resources, as resourcehelper.PodRequests computes it). Inodes
// and PIDs cannot be requested: zero.
func podRequest(pod *corev1.Pod, r corev1.ResourceName) resource.Quantity {
	if r != corev1.ResourceMemory && r != corev1.ResourceEphemeralStorage {
		return resource.Quantity{}
	}
	q := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[r]
	return q.DeepCopy()
}

// rank orders pods for eviction on signal s, most evictable first, as the
// kubelet does:
//   - memory and disk: pods using more than their request of the starved
//     resource first, then lowest priority first, then largest usage above
//     request first;
//   - pid: lowest priority first, then most processes first.
//
// A pod without stats comes first at every usage step. Ties keep the order
// by namespace/name, so a rank is deterministic.
func rank(s Signal, cs []candidate) {
	r := s.Resource()
	byStats := func(a, b candidate) (int, bool) {
		if a.hasStats != b.hasStats {
			if !a.hasStats {
				return -1, true
			}
			return 1, true
		}
		return 0, false
	}
	over := func(a, b candidate) int {
		if c, ok := byStats(a, b); ok {
			return c
		}
		return cmpTrueFirst(a.over(r), b.over(r))
	}
	priority := func(a, b candidate) int { return cmp.Compare(a.priority, b.priority) }
	usage := func(a, b candidate) int {
		if c, ok := byStats(a, b); ok {
			return c
		}
		ua, ub := a.aboveRequest(r), b.aboveRequest(r)
		return ub.Cmp(ua)
	}
	name := func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.pod.Namespace, b.pod.Namespace), cmp.Compare(a.pod.Name, b.pod.Name))
	}
	order := []func(a, b candidate) int{over, priority, usage, name}
	if s == SignalPIDAvailable {
		order = []func(a, b candidate) int{priority, usage, name}
	}
	slices.SortStableFunc(cs, func(a, b candidate) int {
		for _, f := range order {
			if c := f(a, b); c != 0 {
				return c
			}
		}
		return 0
	})
}

func cmpTrueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// candidates are the pods that may be evicted for signal s: not in a
// terminal phase and not critical.
func candidates(s Signal, pods []*corev1.Pod, obs Observations) []candidate {
	r := s.Resource()
	var out []candidate
	for _, p := range pods {
		if p == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || IsCritical(p) {
			continue
		}
		u, ok := obs.Pods[p.UID]
		out = append(out, candidate{pod: p, usage: u, hasStats: ok, request: podRequest(p, r),
			priority: corev1helpers.PodPriority(p)})
	}
	return out
}
