package statuswriter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// kubeletConditions are the pod conditions the kubelet owns; the others on
// the object (PodScheduled's reason from the scheduler, DisruptionTarget,
// readiness gates) are kept.
var kubeletConditions = map[corev1.PodConditionType]bool{
	corev1.PodReadyToStartContainers: true,
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReady:                  true,
	corev1.PodScheduled:              true,
	// In-place resize: withdrawn by the kubelet once done.
	corev1.PodResizePending:    true,
	corev1.PodResizeInProgress: true,
}

// merge is the status to write: the PodActor's, with the conditions the
// kubelet does not own kept from the object (unless the PodActor sets one
// too, as DisruptionTarget for an eviction), and the transition times of
// unchanged conditions kept as they are. A pod with readiness gates is
// Ready only when each gate's condition (set by others) is True on the
// object (see gateReady).
//
// A condition whose status differs from the object's (or that the object
// lacks) takes now as its transition time, as the kubelet's status manager
// stamps it: the Ready condition's time is when the pod became ready (the
// conformance suite compares it with the container's start).
func merge(old, ours *corev1.PodStatus, gates []corev1.PodReadinessGate, now metav1.Time) *corev1.PodStatus {
	next := ours.DeepCopy()
	gateReady(next, old, gates)
	for i := range next.Conditions {
		c := &next.Conditions[i]
		c.LastTransitionTime = now
		for _, o := range old.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				if c.Type == corev1.PodScheduled {
					c.Reason, c.Message = o.Reason, o.Message
				}
			}
		}
	}
	set := map[corev1.PodConditionType]bool{}
	for _, c := range next.Conditions {
		set[c.Type] = true
	}
	for _, o := range old.Conditions {
		if !kubeletConditions[o.Type] && !set[o.Type] {
			next.Conditions = append(next.Conditions, o)
		}
	}
	// Fields others set (resize, nominated node) are the object's.
	next.NominatedNodeName = old.NominatedNodeName
	next.Resize = old.Resize
	next.ResourceClaimStatuses = old.ResourceClaimStatuses
	return next
}

// statusPatch is the strategic merge patch from old to next, carrying the
// UID as a precondition (the API server refuses it for another object with
// the same name); nil when nothing changes as the API server keeps it:
// when the two encode the same. The PodActor's times have nanoseconds, the
// API server's seconds (RFC 3339), so a status the object has already
// differs from it in memory only; written, it was a patch of the UID alone,
// which the API server still decodes, admits and reads from etcd.
func statusPatch(uid types.UID, old, next *corev1.PodStatus) ([]byte, error) {
	if apiequality.Semantic.DeepEqual(old, next) {
		return nil, nil
	}
	oldJSON, err := json.Marshal(corev1.Pod{Status: *old})
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	newJSON, err := json.Marshal(corev1.Pod{Status: *next})
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	if bytes.Equal(oldJSON, newJSON) {
		return nil, nil
	}
	newJSON, err = json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: *next})
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	return patch, nil
}

// gateReady turns a Ready condition False, with the kubelet's reason and
// messages, while a readiness gate's condition is missing or not True (the
// kubelet's pod is Ready only when its containers are and every gate is).
// ContainersReady is the containers' alone and stays as it is.
// The gates' conditions are read from the object (old), or from st.
func gateReady(st, old *corev1.PodStatus, gates []corev1.PodReadinessGate) {
	if len(gates) == 0 {
		return
	}
	var ready *corev1.PodCondition
	byType := map[corev1.PodConditionType]*corev1.PodCondition{}
	for i := range old.Conditions {
		byType[old.Conditions[i].Type] = &old.Conditions[i]
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		byType[c.Type] = c
		if c.Type == corev1.PodReady {
			ready = c
		}
	}
	if ready == nil || ready.Status != corev1.ConditionTrue {
		return
	}
	var msgs []string
	for _, g := range gates {
		c := byType[g.ConditionType]
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case c.Status != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), c.Status))
		}
	}
	if len(msgs) == 0 {
		return
	}
	ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, "ReadinessGatesNotReady", strings.Join(msgs, ", ")
}
