package podevents

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// The kubelet's in-place resize event reasons.
const (
	ResizeStarted    = "ResizeStarted"
	ResizeCompleted  = "ResizeCompleted"
	ResizeDeferred   = "ResizeDeferred"
	ResizeInfeasible = "ResizeInfeasible"
	ResizeError      = "ResizeError"
)

// resizeEvents are the kubelet's events of a resize: ResizeStarted when it
// is allocated, ResizeCompleted when every running container has it, ResizeDeferred or ResizeInfeasible when it is left pending
// (journaled again only when the reason or the generation changes, as the
// kubelet records them), ResizeError when the runtime refused it. Their
// messages are the kubelet's: a prefix, then the pod's allocation as JSON.
// pod is the pod as allocated after the event, so a pending resize's
// message carries the generation and why, not the containers (the kubelet
// lists the resources asked for there).
func resizeEvents(pod *corev1.Pod, ev *pb.Event) []Event {
	switch e := ev.GetKind().(type) {
	case *pb.Event_PodResizeAllocated:
		return []Event{{corev1.EventTypeNormal, ResizeStarted, resizeMessage("Pod resize started", pod, e.PodResizeAllocated.Generation, "", true), ""}}
	case *pb.Event_PodResizeCompleted:
		return []Event{{corev1.EventTypeNormal, ResizeCompleted, resizeMessage("Pod resize completed", pod, e.PodResizeCompleted.Generation, "", true), ""}}
	case *pb.Event_PodResizePending:
		p := e.PodResizePending
		reason := ResizeDeferred
		switch p.Reason {
		case "":
			return nil
		case corev1.PodReasonInfeasible:
			reason = ResizeInfeasible
		}
		return []Event{{corev1.EventTypeWarning, reason, resizeMessage("Pod resize "+p.Reason, pod, p.Generation, p.Message, false), ""}}
	case *pb.Event_ContainerResizeFailed:
		var gen int64
		if pod != nil {
			gen = pod.Generation
		}
		return []Event{{corev1.EventTypeWarning, ResizeError, resizeMessage("Pod resize error", pod, gen, e.ContainerResizeFailed.Message, true), ""}}
	}
	return nil
}

type containerAllocation struct {
	Name      string                      `json:"name"`
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

type podResourceSummary struct {
	InitContainers []containerAllocation `json:"initContainers,omitempty"`
	Containers     []containerAllocation `json:"containers,omitempty"`
	Generation     int64                 `json:"generation"`
	Error          string                `json:"error,omitempty"`
}

func resizeMessage(prefix string, pod *corev1.Pod, generation int64, errMsg string, containers bool) string {
	sum := podResourceSummary{Generation: generation, Error: errMsg}
	if containers && pod != nil {
		for _, c := range pod.Spec.InitContainers {
			sum.InitContainers = append(sum.InitContainers, containerAllocation{Name: c.Name, Resources: c.Resources})
		}
		for _, c := range pod.Spec.Containers {
			sum.Containers = append(sum.Containers, containerAllocation{Name: c.Name, Resources: c.Resources})
		}
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return prefix
	}
	return fmt.Sprintf("%s: %s", prefix, b)
}
