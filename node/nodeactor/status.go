package nodeactor

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeHealth is what the node knows of its container runtime.
type RuntimeHealth struct {
	// Name and Version are from CRI Version (e.g. containerd, 2.4.2).
	Name, Version string
	// Err is why the runtime is not usable (unreachable, not ready); nil
	// when it answers and is ready.
	Err error
}

// Machine is the node's fixed description.
type Machine struct {
	Capacity    corev1.ResourceList
	Allocatable corev1.ResourceList
	Addresses   []corev1.NodeAddress
	Info        corev1.NodeSystemInfo
	// Port is the kubelet API port advertised in daemonEndpoints (0: none).
	Port int32
	// DeclaredFeatures are the features the node declares in its status
	// (NodeDeclaredFeatures): the API server refuses a pod update that
	// needs one the node does not declare.
	DeclaredFeatures []string
}

// Status is the node status for what the node knows now. prev is the last
// status sent (nil before the first): a condition keeps its transition time
// while its status stays the same. pressure are the eviction manager's
// MemoryPressure, DiskPressure and PIDPressure conditions; a type it does
// not give is False.
func Status(prev *corev1.NodeStatus, m Machine, rt RuntimeHealth, pressure []corev1.NodeCondition, now time.Time) corev1.NodeStatus {
	t := metav1.NewTime(now)
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: "KubeletReady", Message: "actorlet is posting ready status"}
	if rt.Err != nil {
		ready.Status, ready.Reason = corev1.ConditionFalse, "KubeletNotReady"
		ready.Message = "container runtime is down: " + rt.Err.Error()
	}
	conds := []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "actorlet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "actorlet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "actorlet has sufficient PID available"},
		ready,
	}
	for _, p := range pressure {
		for i := range conds {
			if conds[i].Type == p.Type && p.Type != corev1.NodeReady {
				conds[i].Status, conds[i].Reason, conds[i].Message = p.Status, p.Reason, p.Message
			}
		}
	}
	for i := range conds {
		conds[i].LastHeartbeatTime = t
		conds[i].LastTransitionTime = t
		if prev != nil {
			for _, p := range prev.Conditions {
				if p.Type == conds[i].Type && p.Status == conds[i].Status {
					conds[i].LastTransitionTime = p.LastTransitionTime
				}
			}
		}
	}
	info := m.Info
	if rt.Name != "" {
		info.ContainerRuntimeVersion = rt.Name + "://" + rt.Version
	} else if prev != nil {
		info.ContainerRuntimeVersion = prev.NodeInfo.ContainerRuntimeVersion
	}
	st := corev1.NodeStatus{
		Capacity: m.Capacity.DeepCopy(), Allocatable: m.Allocatable.DeepCopy(),
		Conditions: conds, Addresses: append([]corev1.NodeAddress(nil), m.Addresses...), NodeInfo: info,
	}
	if m.Port != 0 {
		st.DaemonEndpoints.KubeletEndpoint.Port = m.Port
	}
	st.DeclaredFeatures = append([]string(nil), m.DeclaredFeatures...)
	return st
}

// Ready is the status's Ready condition (the zero condition if it has none).
func Ready(st *corev1.NodeStatus) corev1.NodeCondition {
	if st != nil {
		if c := condition(st, corev1.NodeReady); c != nil {
			return *c
		}
	}
	return corev1.NodeCondition{}
}

// condition is st's condition of type typ, nil if it has none.
func condition(st *corev1.NodeStatus, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// changed tells whether a status differs from the last one sent in more
// than its heartbeat times.
func changed(prev *corev1.NodeStatus, next corev1.NodeStatus) bool {
	if prev == nil || len(prev.Conditions) != len(next.Conditions) {
		return true
	}
	for i := range next.Conditions {
		p, n := prev.Conditions[i], next.Conditions[i]
		if p.Type != n.Type || p.Status != n.Status || p.Reason != n.Reason || p.Message != n.Message {
			return true
		}
	}
	return !equalResources(prev.Capacity, next.Capacity) || !equalResources(prev.Allocatable, next.Allocatable) ||
		prev.NodeInfo != next.NodeInfo || len(prev.Addresses) != len(next.Addresses)
}

// differs tells whether the Node's status on the server says other than
// next in a condition next sets: someone else wrote it since.
func differs(server *corev1.NodeStatus, next corev1.NodeStatus) bool {
	for _, n := range next.Conditions {
		found := false
		for _, s := range server.Conditions {
			if s.Type == n.Type {
				found = true
				if s.Status != n.Status || s.Reason != n.Reason || s.Message != n.Message {
					return true
				}
			}
		}
		if !found {
			return true
		}
	}
	return false
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
