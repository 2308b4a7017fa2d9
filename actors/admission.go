package actors

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// Admitter decides whether a pod new to the node may run beside the pods
// the node has already admitted and not yet removed. A non-empty reason
// rejects the pod (the kubelet's reasons: OutOfcpu, OutOfmemory, OutOfpods)
// with message saying why. It is called from the Supervisor's goroutine, in
// the order the pods arrive, and must not block.
type Admitter interface {
	Admit(pod *corev1.Pod, admitted []*corev1.Pod) (reason, message string)
}

// Admitters asks each admitter in turn: a pod is admitted only if all admit
// it, and the first rejection wins, with its reason and message (the
// admitters after it are not asked). A rejected pod is journaled as rejected
// (PodRejected): it goes Failed with that reason and message in its status,
// gets an event, and never gets a sandbox, as in the kubelet.
type Admitters []Admitter

// Admit implements Admitter.
func (as Admitters) Admit(pod *corev1.Pod, admitted []*corev1.Pod) (reason, message string) {
	for _, a := range as {
		if reason, message = a.Admit(pod, admitted); reason != "" {
			return reason, message
		}
	}
	return "", ""
}

// JoinAdmitters is first followed by more, nil ones left out; nil if none
// is left, the one if one is.
func JoinAdmitters(first Admitter, more ...Admitter) Admitter {
	var as Admitters
	for _, a := range append([]Admitter{first}, more...) {
		if a != nil {
			as = append(as, a)
		}
	}
	switch len(as) {
	case 0:
		return nil
	case 1:
		return as[0]
	}
	return as
}

// admission is the Supervisor's record of the pods holding the node's
// resources: admitted, or accepted by an earlier run, and not removed.
type admission struct {
	admitter Admitter
	pods     map[string]*corev1.Pod
}

func newAdmission(a Admitter) *admission {
	return &admission{admitter: a, pods: map[string]*corev1.Pod{}}
}

// hold records a pod that holds resources without a new verdict (accepted
// by an earlier run).
func (a *admission) hold(uid string, pod *corev1.Pod) {
	if pod != nil && a.admitter != nil {
		a.pods[uid] = pod
	}
}

// podReleased tells the Supervisor that a pod no longer holds the node's
// resources (its phase is Succeeded or Failed).
type podReleased struct{ uid string }

// release forgets a pod that no longer holds resources.
func (a *admission) release(uid string) { delete(a.pods, uid) }

// admit judges a pod new to the node and, when it fits, holds it.
func (a *admission) admit(pod *corev1.Pod) (reason, message string) {
	uid := string(pod.UID)
	if a.admitter == nil {
		return "", ""
	}
	if _, ok := a.pods[uid]; ok {
		return "", ""
	}
	if pod.DeletionTimestamp != nil {
		return "", "" // only taken down: holds nothing
	}
	others := make([]*corev1.Pod, 0, len(a.pods))
	for _, p := range a.pods {
		others = append(others, p)
	}
	reason, message = a.admitter.Admit(pod, others)
	if reason == "" {
		a.pods[uid] = pod
	}
	return reason, message
}

// resize judges the new spec of a pod the node holds (an in-place resize)
// beside the other pods it holds, as the kubelet's allocation manager
// admits a resize: the pod's own place is not counted against it. When it
// fits, the pod holds its new requests from then on; when it does not, it
// keeps holding what it held. judged is false when there is no admitter
// or the pod is not held (the core then fits it to allocatable alone). A
// pod-level resources change is not judged to hold anything: the core
// finds it Infeasible.
func (a *admission) resize(pod *corev1.Pod) (judged bool, reason, message string) {
	uid := string(pod.UID)
	held, ok := a.pods[uid]
	if a.admitter == nil || !ok || pod.DeletionTimestamp != nil {
		return false, "", ""
	}
	if !resizing(held, pod) || !apiequality.Semantic.DeepEqual(held.Spec.Resources, pod.Spec.Resources) {
		return true, "", ""
	}
	others := make([]*corev1.Pod, 0, len(a.pods))
	for other, p := range a.pods {
		if other != uid {
			others = append(others, p)
		}
	}
	if reason, message = a.admitter.Admit(pod, others); reason == "" {
		a.pods[uid] = pod
	}
	return true, reason, message
}

// pendingResize reports whether pod, held, asks for other container
// resources than it holds: a resize not judged to fit yet.
func (a *admission) pendingResize(pod *corev1.Pod) bool {
	held, ok := a.pods[string(pod.UID)]
	return ok && a.admitter != nil && pod.DeletionTimestamp == nil && resizing(held, pod)
}

// resizing reports whether a container of pod asks for other resources
// than the same container of held.
func resizing(held, pod *corev1.Pod) bool {
	before := map[string]*corev1.ResourceRequirements{}
	for _, cs := range [][]corev1.Container{held.Spec.InitContainers, held.Spec.Containers} {
		for i := range cs {
			before[cs[i].Name] = &cs[i].Resources
		}
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if b, ok := before[cs[i].Name]; ok && !apiequality.Semantic.DeepEqual(*b, cs[i].Resources) {
				return true
			}
		}
	}
	return false
}
