package podevents

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// lifecycleHookEvents is the event of a lifecycle hook's verdict (user
// code, actors.LifecycleHook): a Veto and an interrupted try are Warnings, a
// Delay is Normal, each with the hook's reason; Continue is no event.
func lifecycleHookEvents(h *pb.HookDecided) []Event {
	step := h.Stage
	if h.Container != "" {
		step += " of container " + h.Container
	}
	msg := func(what string) string {
		if h.Message == "" {
			return fmt.Sprintf("lifecycle hook %s %s", what, step)
		}
		return fmt.Sprintf("lifecycle hook %s %s: %s", what, step, h.Message)
	}
	switch lifecycle.Action(h.Action) {
	case lifecycle.ActionVeto:
		return []Event{{corev1.EventTypeWarning, h.Reason, msg("vetoed"), h.Container}}
	case lifecycle.ActionDelay:
		return []Event{{corev1.EventTypeNormal, h.Reason, msg("delayed"), h.Container}}
	case lifecycle.ActionInterrupted:
		return []Event{{corev1.EventTypeWarning, h.Reason, msg("was interrupted at"), h.Container}}
	}
	return nil
}
