package apisource

import (
	"maps"
	"reflect"
	"sync"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recentKept is how many distinct values of a field a podSharer keeps to
// compare new pods with.
const recentKept = 8

// podSharer makes the pods a cache keeps share the values they have in
// common with other pods: the pods of one template (a ReplicaSet's, a
// Job's, a fleet benchmark's) have equal containers, tolerations, labels,
// annotations and node selector, and their status the same image and
// condition names.
// Guarantees:
//   - A value is replaced only by one exactly equal to it (reflect.DeepEqual,
//     maps.Equal, string equality): what a pod reads, marshals or hashes
//     is unchanged. Empty (nil or zero-length) values are left as they are.
//   - The values shared are read only, as everything in an informer's cache
//     is: nothing may change a cached pod in place.
//   - Strings are interned with package unique, whose table forgets a
//     string once no pod holds it; the other values are compared with the
//     recentKept distinct values seen last, so that a podSharer holds a
//     bounded number of them.
//
// Safe for concurrent use.
type podSharer struct {
	labels, annotations recent[map[string]string]
	nodeSelector        recent[map[string]string]
	ownerReferences     recent[[]metav1.OwnerReference]
	containers          recent[[]corev1.Container]
	initContainers      recent[[]corev1.Container]
	tolerations         recent[[]corev1.Toleration]
	securityContext     recent[*corev1.PodSecurityContext]
	hostIPs             recent[[]corev1.HostIP]
	conditions          recent[[]corev1.PodCondition]
}

func newPodSharer() *podSharer {
	return &podSharer{
		labels:          recent[map[string]string]{equal: maps.Equal[map[string]string, map[string]string]},
		annotations:     recent[map[string]string]{equal: maps.Equal[map[string]string, map[string]string]},
		nodeSelector:    recent[map[string]string]{equal: maps.Equal[map[string]string, map[string]string]},
		ownerReferences: recent[[]metav1.OwnerReference]{equal: deepEqual[[]metav1.OwnerReference]},
		containers:      recent[[]corev1.Container]{equal: deepEqual[[]corev1.Container]},
		initContainers:  recent[[]corev1.Container]{equal: deepEqual[[]corev1.Container]},
		tolerations:     recent[[]corev1.Toleration]{equal: deepEqual[[]corev1.Toleration]},
		securityContext: recent[*corev1.PodSecurityContext]{equal: deepEqual[*corev1.PodSecurityContext]},
		hostIPs:         recent[[]corev1.HostIP]{equal: deepEqual[[]corev1.HostIP]},
		conditions:      recent[[]corev1.PodCondition]{equal: deepEqual[[]corev1.PodCondition]},
	}
}

func deepEqual[T any](a, b T) bool { return reflect.DeepEqual(a, b) }

// desiredPart shares p's metadata and spec values with other pods'. p is
// a new pod, not yet published.
func (s *podSharer) desiredPart(p *corev1.Pod) {
	p.Namespace = intern(p.Namespace)
	p.GenerateName = intern(p.GenerateName)
	if len(p.Labels) > 0 {
		p.Labels = s.labels.share(p.Labels)
	}
	if len(p.Annotations) > 0 {
		p.Annotations = s.annotations.share(p.Annotations)
	}
	if len(p.OwnerReferences) > 0 {
		p.OwnerReferences = s.ownerReferences.share(p.OwnerReferences)
	}
	sp := &p.Spec
	sp.NodeName = intern(sp.NodeName)
	sp.ServiceAccountName = intern(sp.ServiceAccountName)
	sp.DeprecatedServiceAccount = intern(sp.DeprecatedServiceAccount)
	sp.SchedulerName = intern(sp.SchedulerName)
	sp.PriorityClassName = intern(sp.PriorityClassName)
	sp.RestartPolicy = corev1.RestartPolicy(intern(string(sp.RestartPolicy)))
	sp.DNSPolicy = corev1.DNSPolicy(intern(string(sp.DNSPolicy)))
	if len(sp.Containers) > 0 {
		sp.Containers = s.containers.share(sp.Containers)
	}
	if len(sp.InitContainers) > 0 {
		sp.InitContainers = s.initContainers.share(sp.InitContainers)
	}
	if len(sp.Tolerations) > 0 {
		sp.Tolerations = s.tolerations.share(sp.Tolerations)
	}
	if len(sp.NodeSelector) > 0 {
		sp.NodeSelector = s.nodeSelector.share(sp.NodeSelector)
	}
	if sp.SecurityContext != nil {
		sp.SecurityContext = s.securityContext.share(sp.SecurityContext)
	}
}

// status interns the names and values p's status repeats from pod to
// pod, shares its host IPs with the other pods of its node, and its
// conditions with the pods whose conditions changed in the same second
// (the API server keeps their times to the second): the pods of a burst.
// p is a new version, not yet published.
func (s *podSharer) status(p *corev1.Pod) {
	st := &p.Status
	st.Phase = corev1.PodPhase(intern(string(st.Phase)))
	st.QOSClass = corev1.PodQOSClass(intern(string(st.QOSClass)))
	st.HostIP = intern(st.HostIP)
	if len(st.HostIPs) > 0 {
		st.HostIPs = s.hostIPs.share(st.HostIPs)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type = corev1.PodConditionType(intern(string(c.Type)))
		c.Status = corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason = intern(c.Reason)
	}
	if len(st.Conditions) > 0 {
		st.Conditions = s.conditions.share(st.Conditions)
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			c := &list[i]
			c.Name, c.Image, c.ImageID = intern(c.Name), intern(c.Image), intern(c.ImageID)
			if w := c.State.Waiting; w != nil {
				w.Reason = intern(w.Reason)
			}
			if t := c.State.Terminated; t != nil {
				t.Reason = intern(t.Reason)
			}
			if t := c.LastTerminationState.Terminated; t != nil {
				t.Reason = intern(t.Reason)
			}
		}
	}
}

// intern is s as held once by the process (package unique); "" as is.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// recent is the last recentKept distinct values of a field, most recent
// first.
type recent[T any] struct {
	equal func(a, b T) bool

	mu   sync.Mutex
	vals []T
}

// share returns the kept value equal to v, moved to the front, or keeps v
// (dropping the least recent value beyond recentKept) and returns it.
func (r *recent[T]) share(v T) T {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range r.vals {
		if r.equal(k, v) {
			copy(r.vals[1:i+1], r.vals[:i])
			r.vals[0] = k
			return k
		}
	}
	if len(r.vals) < recentKept {
		var zero T
		r.vals = append(r.vals, zero)
	}
	copy(r.vals[1:], r.vals[:len(r.vals)-1])
	r.vals[0] = v
	return v
}
